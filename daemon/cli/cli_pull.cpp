// `hearth pull SOURCE` gets a model into the cache (model_pull.h says from where and how it
// is checked); `hearth models` lists the cache, `hearth models rm NAME` removes one,
// `hearth models --default NAME` makes one the default, `hearth models --pinned` lists the
// pins built in. Progress goes to stdout (a bar on a terminal, plain lines otherwise); errors
// to stderr. Exit codes: 0 ok, 1 the pull or the change failed.
#include <cstdio>
#include <memory>
#include <string>

#include <boost/json.hpp>

#include "daemon/cli/cli_commands.h"
#include "daemon/models/model_cache.h"
#include "daemon/models/model_pull.h"
#include "daemon/models/models_lock.h"
#include "daemon/models/progress_bar.h"
#include "inference/gguf/gguf_file.h"
#include "inference/load/model_info.h"

namespace hearth::daemon {
namespace {

struct pull_flags {
    pull_options opts;
    bool make_default = false;
};

struct models_flags {
    std::string default_name;
    std::string lock_path;
    bool json = false;
    bool pinned = false;
    std::string rm_name;
};

int run_pull(const pull_flags & f) {
    auto got = pull_model(f.opts, stdout);
    if (!got) {
        std::fflush(stdout);
        std::fprintf(stderr, "hearth pull: %s\n", got.message().c_str());
        return 1;
    }
    if (got->already_present) std::printf("%s is already in the cache: %s\n", got->name.c_str(), got->path.c_str());
    else std::printf("ready: %s\n", got->path.c_str());
    if (got->verified) std::printf("SHA-256 %s (verified)\n", got->sha256.c_str());
    else if (!got->sha256.empty())
        std::printf("SHA-256 %s (not verified: no known hash; pass --sha256 to check one)\n", got->sha256.c_str());
    // The first model in the cache becomes the default, so `hearth complete` just works.
    if (f.make_default || !has_default_model()) {
        if (auto s = set_default_model(got->name); !s) {
            std::fprintf(stderr, "hearth pull: %s\n", s.message().c_str());
            return 1;
        }
        std::printf("%s is the default model\n", got->name.c_str());
    }
    return 0;
}

struct model_summary {
    std::string architecture = "?";
    std::string quant_mix;       // "q4_K 169, f32 141, q6_K 29" (tensors by type, largest share first)
    std::string error;
};

model_summary summarise(const std::string & path) {
    model_summary s;
    auto file = inference::gguf::gguf_file::open(path);
    if (!file) {
        s.error = file.message();
        return s;
    }
    auto info = inference::describe_model(*file);
    if (!info) {
        s.error = info.message();
        return s;
    }
    s.architecture = info->architecture;
    for (const auto & t : info->tensor_types)
        s.quant_mix += (s.quant_mix.empty() ? "" : ", ") + t.type + " " + std::to_string(t.n_tensors);
    return s;
}

int list_models(const models_flags & f) {
    auto dir = model_cache_dir();
    auto models = list_cached_models();
    if (!dir || !models) {
        std::fprintf(stderr, "hearth models: %s\n", (dir ? models.message() : dir.message()).c_str());
        return 1;
    }
    if (f.json) {
        boost::json::array arr;
        for (const auto & m : *models) {
            const auto s = summarise(m.path);
            boost::json::object o{{"name", m.name}, {"path", m.path}, {"size_bytes", m.size_bytes},
                                  {"architecture", s.architecture}, {"quant_mix", s.quant_mix},
                                  {"verified", !m.verified_sha256.empty()}, {"default", m.is_default}};
            if (!m.verified_sha256.empty()) o["sha256"] = m.verified_sha256;
            if (!s.error.empty()) o["error"] = s.error;
            arr.push_back(std::move(o));
        }
        std::printf("%s\n", boost::json::serialize(boost::json::object{{"dir", *dir}, {"models", arr}}).c_str());
        return 0;
    }
    if (models->empty()) {
        std::printf("no models in %s (hearth pull NAME|URL|hf:OWNER/REPO/FILE.gguf gets one; hearth models --pinned lists the pinned names)\n",
                    dir->c_str());
        return 0;
    }
    std::printf("models in %s\n", dir->c_str());
    std::printf("  %-40s %-10s %10s  %-10s %s\n", "NAME", "ARCH", "SIZE", "VERIFIED", "TENSOR TYPES");
    for (const auto & m : *models) {
        const auto s = summarise(m.path);
        std::printf("%c %-40s %-10s %10s  %-10s %s\n", m.is_default ? '*' : ' ', m.name.c_str(), s.architecture.c_str(),
                    human_bytes(m.size_bytes).c_str(), m.verified_sha256.empty() ? "no" : "sha256",
                    s.error.empty() ? s.quant_mix.c_str() : ("unreadable: " + s.error).c_str());
    }
    std::printf("(* the default model)\n");
    return 0;
}

int list_pinned(const models_flags & f) {
    auto lock = load_models_lock(f.lock_path);
    if (!lock) {
        std::fprintf(stderr, "hearth models: %s\n", lock.message().c_str());
        return 1;
    }
    if (f.json) {
        boost::json::array arr;
        for (const auto & m : lock->models) {
            boost::json::array parts;
            for (const auto & p : m.parts)
                parts.push_back({{"requirement", p.requirement}, {"wheel_sha256", p.wheel_sha256}, {"wheel_file", p.wheel_file()},
                                 {"member", p.member}, {"size_bytes", p.size_bytes}, {"sha256", p.sha256}});
            arr.push_back({{"name", m.name}, {"size_bytes", m.size_bytes}, {"sha256", m.sha256}, {"parts", parts}});
        }
        std::printf("%s\n", boost::json::serialize(boost::json::object{{"default", lock->default_model}, {"models", arr}}).c_str());
        return 0;
    }
    for (const auto & m : lock->models)
        std::printf("%s%s  %s  %zu parts\n", m.name.c_str(), m.name == lock->default_model ? " (default)" : "",
                    human_bytes(m.size_bytes).c_str(), m.parts.size());
    return 0;
}

}  // namespace

void add_pull_commands(CLI::App & app, cli_state & state) {
    auto pf = std::make_shared<pull_flags>();
    auto * pull = app.add_subcommand("pull", "Download a model into the cache: a pinned NAME, an https:// URL or hf:OWNER/REPO/FILE.gguf[@REVISION]");
    pull->add_option("source", pf->opts.source, "What to download (hearth models --pinned lists the pinned names)")->required();
    pull->add_option("--name", pf->opts.name, "Name in the cache for a URL (default: the file name without .gguf)");
    pull->add_option("--sha256", pf->opts.sha256, "Expected SHA-256 of the file (hex); the download is refused if it differs");
    pull->add_flag("--default", pf->make_default, "Make it the default model (the first model pulled always is)");
    pull->add_flag("--force", pf->opts.force, "Download again even if the model is in the cache");
    pull->add_option("--timeout", pf->opts.stall_timeout_s, "Give up when no data arrives for this many seconds")
        ->check(CLI::Range(1, 3600));
    pull->add_option("--lock", pf->opts.lock_path, "Read the pins from this models.lock instead of the built-in copy");
    pull->callback([pf, &state] { state.exit_code = run_pull(*pf); });

    auto mf = std::make_shared<models_flags>();
    auto * models = app.add_subcommand("models", "List the models in the cache (name, architecture, size, verified, tensor types, the default)");
    models->add_flag("--json", mf->json, "Print JSON");
    models->add_option("--default", mf->default_name, "Make NAME the default model");
    models->add_flag("--pinned", mf->pinned, "List the pinned models hearth pull knows by name");
    models->add_option("--lock", mf->lock_path, "With --pinned: read this models.lock instead of the built-in copy");
    auto * rm = models->add_subcommand("rm", "Remove a model from the cache");
    rm->add_option("name", mf->rm_name, "The model's name (as hearth models lists it)")->required();
    rm->callback([mf, &state] {
        if (auto s = remove_cached_model(mf->rm_name); !s) {
            std::fprintf(stderr, "hearth models rm: %s\n", s.message().c_str());
            state.exit_code = 1;
            return;
        }
        std::printf("removed %s\n", mf->rm_name.c_str());
        state.exit_code = 0;
    });
    models->callback([mf, models, &state] {
        if (models->got_subcommand("rm")) return;
        if (!mf->default_name.empty()) {
            if (auto s = set_default_model(mf->default_name); !s) {
                std::fprintf(stderr, "hearth models: %s\n", s.message().c_str());
                state.exit_code = 1;
                return;
            }
            std::printf("%s is the default model\n", mf->default_name.c_str());
            state.exit_code = 0;
            return;
        }
        state.exit_code = mf->pinned ? list_pinned(*mf) : list_models(*mf);
    });
}

}  // namespace hearth::daemon
