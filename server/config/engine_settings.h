// The engine's configuration (hedge::EngineConfig) from RawFlags: the
// flags' policy as the defaults of every replica set, each set's own
// values over them, and the global limits. For ConfigFromRawFlags; values
// are parsed here and checked by the engine (ValidateEngineConfig), whose
// FieldError ForSourceOfField (server_config.h) turns into the flag or
// the file's place.
//
// Thread safety: pure functions (apart from checking that a set's ca_file
// is readable).

#ifndef TAILGATE_SERVER_CONFIG_ENGINE_SETTINGS_H_
#define TAILGATE_SERVER_CONFIG_ENGINE_SETTINGS_H_

#include "hedge/config/engine_config.h"
#include "server/config/flag_reader.h"
#include "server/config/server_config.h"

namespace tailgate::server {

// The engine configuration from the flags (and the config file's sets);
// the first error is kept in `reader`.
hedge::EngineConfig EngineConfigFromFlags(FlagReader& reader,
                                          const RawFlags& flags);

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_CONFIG_ENGINE_SETTINGS_H_
