// The `shoal` executable. All behaviour lives in the modules; see src/cli/.
#include "cli/app.h"

int main(int argc, char** argv) {
  return shoal::cli::run(argc, argv);
}
