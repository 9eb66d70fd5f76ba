// Which addresses open mode may listen on: loopback only (issue 19: a mesh beyond one machine
// needs auth mode).
#include "supervisor/local_mesh.h"

#include <gtest/gtest.h>

namespace shoal::supervisor {
namespace {

TEST(OpenModeHostTest, LoopbackAddressesAreAllowed) {
  for (const char* host : {"127.0.0.1", "127.1.2.3", "localhost", "::1"})
    EXPECT_TRUE(checkOpenModeHost(host).isOk()) << host;
}

TEST(OpenModeHostTest, EveryOtherAddressIsRefusedByName) {
  for (const char* host : {"0.0.0.0", "192.168.1.10", "10.0.0.1", "::", "fe80::1", "example.com",
                           "128.0.0.1", "", "127.0.0.1.evil", "localhost.example.com"}) {
    Status st = checkOpenModeHost(host);
    EXPECT_EQ(st.reason(), "open-mode-off-loopback") << host;
  }
}

}  // namespace
}  // namespace shoal::supervisor
