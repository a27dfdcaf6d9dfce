// The chat prompt the model reads, exactly: the daemon's [chat] system-prompt as the system
// message, and "" (as docs/daemon.md says) for none at all, with nothing put in its place.
#include <catch2/catch.hpp>

#include "daemon/pipeline/chat_pipeline.h"
#include "daemon/settings/config.h"
#include "inference/prompt/chat_template.h"

using namespace hearth;
using namespace hearth::daemon;

namespace {

std::string chatml_prompt(const std::string & config_text, const chat_input & in) {
    daemon_config cfg;
    REQUIRE(load_config_text(config_text, "test.toml", cfg).has_value());
    std::vector<inference::chat_turn> turns;
    for (const auto & m : build_chat_messages(in, cfg.chat.system_prompt)) turns.push_back({m.role, m.content});
    auto text = inference::render_chat(inference::chat_format::chatml, turns);
    REQUIRE(text.has_value());
    return *text;
}

}  // namespace

TEST_CASE("chat prompt: system-prompt = \"\" sends no system message, a set one is sent as written", "[daemon][chat]") {
    chat_input in;
    in.prompt = "What is 2 + 2?";
    CHECK(chatml_prompt("[chat]\nsystem-prompt = \"\"\n", in) ==
          "<|im_start|>user\nWhat is 2 + 2?<|im_end|>\n<|im_start|>assistant\n");
    CHECK(chatml_prompt("[chat]\nsystem-prompt = \"Be brief.\"\n", in) ==
          "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nWhat is 2 + 2?<|im_end|>\n<|im_start|>assistant\n");
    // The default is hearth's own system message.
    const std::string by_default = chatml_prompt("", in);
    CHECK(by_default.rfind("<|im_start|>system\n" + chat_settings{}.system_prompt + "<|im_end|>\n<|im_start|>user\n", 0) == 0);
}
