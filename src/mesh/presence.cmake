# Presence: the publisher of this instance's own record and the roster view of the bucket
# (docs/presence.md). Kept in its own library so mesh/CMakeLists.txt stays another owner's.
shoal_library(presence
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/presence_publisher.cc ${CMAKE_CURRENT_LIST_DIR}/roster_view.cc
  DEPS shoal_transport shoal_wire shoal_base)

shoal_test(presence_unit_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/presence_publisher_test.cc
          ${CMAKE_CURRENT_LIST_DIR}/roster_view_test.cc
  DEPS shoal_presence
  LABELS unit)

shoal_test(presence_integration_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/presence_integration_test.cc
  DEPS shoal_presence shoal_testing
  LABELS integration
  TIMEOUT 120)
