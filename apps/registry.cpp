#include "registry.hpp"

#include "drivelab/emulators/register.hpp"
#include "drivelab/oltp/register.hpp"
#include "drivelab/render/render.hpp"
#include "drivelab/vdi/register.hpp"

namespace drivelab::app {

runner::Registry make_registry() {
  runner::Registry registry;
  oltp::register_emulators(registry);       // tpcc
  emulators::register_emulators(registry);  // io
  render::register_emulators(registry);     // render
  vdi::register_emulators(registry);        // replay, vdi
  return registry;
}

}  // namespace drivelab::app
