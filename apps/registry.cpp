#include "registry.hpp"

#include "drivelab/emulators/register.hpp"
#include "drivelab/oltp/register.hpp"
#include "drivelab/render/render.hpp"

namespace drivelab::app {

runner::Registry make_registry() {
  runner::Registry registry;
  oltp::register_emulators(registry);       // tpcc
  emulators::register_emulators(registry);  // io
  render::register_emulators(registry);     // render
  return registry;
}

}  // namespace drivelab::app
