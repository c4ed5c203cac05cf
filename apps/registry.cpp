#include "registry.hpp"

#include "drivelab/emulators/register.hpp"
#include "drivelab/oltp/register.hpp"

namespace drivelab::app {

runner::Registry make_registry() {
  runner::Registry registry;
  oltp::register_emulators(registry);       // tpcc
  emulators::register_emulators(registry);  // io
  return registry;
}

}  // namespace drivelab::app
