// The GPU part of `hearth model info --gpu-layers N|all|auto`: every backend of the build asked
// for its plan (inference::plan_layer_devices: the device opened, nothing uploaded), printed per
// device as text or JSON, with the CPU's share and, where no device takes the layers, why.
// Thread-safety: used from the command's thread only.
#pragma once

#include <string>
#include <vector>

#include <boost/json.hpp>

#include "inference/device/layer_device.h"

namespace hearth::daemon {

struct offload_report {
    inference::gpu_layers want;
    inference::offload_room room;
    int32_t n_layer = 0;
    std::vector<inference::backend_plan> backends;   // in the order the daemon tries them
    int chosen = -1;                                 // backends[chosen] has the first plan, the one the daemon would run
    std::string cpu_reason;                          // why every layer stays on the CPU ("" when one is chosen)
};

offload_report make_offload_report(const inference::model & m, const inference::gpu_layers & want,
                                   const inference::offload_room & room);
void print_offload_report(const offload_report & r);
boost::json::object offload_report_json(const offload_report & r);

}  // namespace hearth::daemon
