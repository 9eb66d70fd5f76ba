// Fuzz builds only (SHOAL_FUZZ): Boost.JSON compiled into shoal_wire from its sources, so the
// parser is instrumented along with our code. The normal build links the system library.
#include <boost/json/src.hpp>  // IWYU pragma: keep
