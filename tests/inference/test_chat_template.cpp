#include <catch2/catch.hpp>

#include "inference/chat_template.h"

using namespace hearth::inference;

TEST_CASE("chat formats are recognised from their markers, never executed", "[inference][chat]") {
    CHECK(*detect_chat_format("{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>{% endfor %}") ==
          chat_format::chatml);
    CHECK(*detect_chat_format("<start_of_turn>user\n{{ x }}<end_of_turn>") == chat_format::gemma);
    CHECK(*detect_chat_format("<|start_header_id|>{{ r }}<|end_header_id|>{{ c }}<|eot_id|>") == chat_format::llama3);
    CHECK(*detect_chat_format("[INST] {{ c }} [/INST]") == chat_format::llama2);
    auto unknown = detect_chat_format("{{ messages | tojson }}");
    REQUIRE_FALSE(unknown.has_value());
    CHECK(unknown.message().find("--chat-template") != std::string::npos);
    CHECK_FALSE(detect_chat_format("").has_value());
}

TEST_CASE("chatml renders turns and opens the assistant's", "[inference][chat]") {
    auto text = render_chat(chat_format::chatml, {{"system", "Be brief."}, {"user", "Hi"}});
    REQUIRE(text.has_value());
    CHECK(*text == "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
    auto no_system = render_chat(chat_format::chatml, {{"user", "Hi"}});
    CHECK(no_system->rfind("<|im_start|>system\n", 0) == 0);
}

TEST_CASE("gemma folds the system message into the first user turn", "[inference][chat]") {
    auto text = render_chat(chat_format::gemma, {{"system", "S"}, {"user", "U"}});
    CHECK(*text == "<bos><start_of_turn>user\nS\n\nU<end_of_turn>\n<start_of_turn>model\n");
}

TEST_CASE("unknown roles and empty conversations are refused", "[inference][chat]") {
    CHECK_FALSE(render_chat(chat_format::chatml, {}).has_value());
    auto bad = render_chat(chat_format::chatml, {{"tool", "x"}});
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.message().find("tool") != std::string::npos);
    CHECK_FALSE(parse_chat_format("jinja").has_value());
}
