// A warm-up followed by typing, on the default model: the answer after the user typed at the
// warmed place must be the one a cold evaluation gives. The window's suffix rows were computed
// while the cursor line was still empty; moved behind the typed text (chunk reuse), they made
// the model answer for the empty line (`til` answered `tilde = '~'`, glued: `tiltilde`).
#include <string>

#include <catch2/catch.hpp>

#include "daemon/engine/model_service.h"
#include "tests/default_model.h"

using namespace hearth::daemon;

namespace {

// posixpath.expanduser's head, its `tilde = '~'` line reduced to its indentation.
const std::string k_head =
    "def expanduser(path):\n"
    "    \"\"\"Expand ~ and ~user constructions.  If user or $HOME is unknown,\n"
    "    do nothing.\"\"\"\n"
    "    path = os.fspath(path)\n"
    "    if isinstance(path, bytes):\n"
    "        tilde = b'~'\n"
    "    else:\n"
    "        ";
const std::string k_tail =
    "\n"
    "    if not path.startswith(tilde):\n"
    "        return path\n"
    "    sep = _get_sep(path)\n"
    "    i = path.find(sep, 1)\n"
    "    if i < 0:\n"
    "        i = len(path)\n"
    "    if i == 1:\n"
    "        if 'HOME' not in os.environ:\n"
    "            try:\n"
    "                import pwd\n"
    "            except ImportError:\n"
    "                # pwd module unavailable, return path unchanged\n"
    "                return path\n"
    "            try:\n"
    "                userhome = pwd.getpwuid(os.getuid()).pw_dir\n"
    "            except KeyError:\n"
    "                # bogus uid\n"
    "                return path\n"
    "        else:\n"
    "            userhome = os.environ['HOME']\n"
    "    return userhome + path[i:]\n";

fim_request at(const std::string & typed) {
    fim_request r;
    r.uri = "file:///w/posixpath.py";
    r.language_id = "python";
    r.prefix = k_head + typed;
    r.suffix = k_tail;
    r.n_predict = 24;
    r.time_budget = std::chrono::seconds(60);
    r.time_cap = std::chrono::seconds(60);
    r.chunk_reuse_min = 64;   // the default (completion.chunk-reuse-min)
    return r;
}

}  // namespace

TEST_CASE("default model: typing where a warm-up ran gives the cold answer", "[daemon][engine][warm-up][default-model]") {
    HEARTH_DEFAULT_MODEL_OR_SKIP(path);
    engine_options o;
    o.model_path = path;
    o.n_ctx = 2048;
    auto warm = make_engine_model_service(o);
    REQUIRE(warm.has_value());
    fim_request w = at("");
    w.prefill_only = true;
    REQUIRE((*warm)->complete(w, {}, {}).has_value());
    for (const std::string typed : {"t", "ti", "til"}) {
        auto got = (*warm)->complete(at(typed), {}, {});
        auto cold_service = make_engine_model_service(o);
        REQUIRE(cold_service.has_value());
        auto cold = (*cold_service)->complete(at(typed), {}, {});
        REQUIRE(got.has_value());
        REQUIRE(cold.has_value());
        REQUIRE(got->candidates.size() == 1);
        REQUIRE(cold->candidates.size() == 1);
        INFO("typed '" << typed << "': after the warm-up '" << got->candidates[0].text << "', cold '" << cold->candidates[0].text << "'");
        CHECK(got->candidates[0].text == cold->candidates[0].text);
    }
}
