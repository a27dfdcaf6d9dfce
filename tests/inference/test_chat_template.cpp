#include <catch2/catch.hpp>

#include <algorithm>

#include "inference/prompt/chat_template.h"
#include "inference/gguf/gguf_file.h"
#include "inference/load/loaded_model.h"
#include "tests/inference/python_util.h"
#include "inference/tokenizer/vocab.h"

using namespace hearth::inference;
using hearth::inference::token_id;

TEST_CASE("chat formats are recognised from their markers, never executed", "[inference][chat]") {
    CHECK(*detect_chat_format("{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>{% endfor %}") ==
          chat_format::chatml);
    CHECK(*detect_chat_format("<start_of_turn>user\n{{ x }}<end_of_turn>") == chat_format::gemma);
    CHECK(*detect_chat_format("<|start_header_id|>{{ r }}<|end_header_id|>{{ c }}<|eot_id|>") == chat_format::llama3);
    CHECK(*detect_chat_format("[INST] {{ c }} [/INST]") == chat_format::mistral);   // [INST] without <<SYS>>
    auto unknown = detect_chat_format("{{ messages | tojson }}");
    REQUIRE_FALSE(unknown.has_value());
    CHECK(unknown.message().find("--chat-template") != std::string::npos);
    CHECK_FALSE(detect_chat_format("").has_value());
}

TEST_CASE("chatml renders turns and opens the assistant's", "[inference][chat]") {
    auto text = render_chat(chat_format::chatml, {{"system", "Be brief."}, {"user", "Hi"}});
    REQUIRE(text.has_value());
    CHECK(*text == "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
    // Without a system message none is invented ([chat] system-prompt = "" means none).
    auto no_system = render_chat(chat_format::chatml, {{"user", "Hi"}});
    CHECK(*no_system == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
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

TEST_CASE("the other families are recognised from their templates' markers", "[inference][chat]") {
    CHECK(*detect_chat_format("{{ bos_token }}{{ '<｜User｜>' + c }}{{ '<｜Assistant｜>' }}") == chat_format::deepseek);
    CHECK(*detect_chat_format("{{ '<｜User｜>' + c }}{% set c = c.split('</think>')[-1] %}{{ '<｜Assistant｜><think>\\n' }}") ==
          chat_format::deepseek_r1);
    CHECK(*detect_chat_format("{{'<|user|>\n' + m + '<|end|>\n'}}{{ '<|assistant|>\n' }}") == chat_format::phi3);
    CHECK(*detect_chat_format("<|start_of_role|>{{ r }}<|end_of_role|>{{ c }}<|end_of_text|>") == chat_format::granite);
    CHECK(*detect_chat_format("{{ '[INST] ' + c + ' [/INST]' }}") == chat_format::mistral);
    CHECK(*detect_chat_format("[INST] <<SYS>>\\n{{ s }}\\n<</SYS>>\\n\\n{{ c }} [/INST]") == chat_format::llama2);
    for (const char * name : {"chatml", "gemma", "llama3", "llama2", "mistral", "phi3", "deepseek", "deepseek-r1", "granite"}) {
        auto f = parse_chat_format(name);
        REQUIRE(f.has_value());
        CHECK(chat_format_name(*f) == name);
    }
}

TEST_CASE("deepseek, phi3, mistral and granite render their turn markers", "[inference][chat]") {
    CHECK(*render_chat(chat_format::deepseek, {{"system", "S"}, {"user", "U"}}) ==
          "<｜begin▁of▁sentence｜>S<｜User｜>U<｜Assistant｜>");
    // R1 opens the answer with <think>, and an earlier answer keeps only what follows its reasoning.
    CHECK(*render_chat(chat_format::deepseek_r1, {{"user", "U"}, {"assistant", "<think>\nhm\n</think>\n\nA"}, {"user", "V"}}) ==
          "<｜begin▁of▁sentence｜><｜User｜>U<｜Assistant｜>\n\nA<｜end▁of▁sentence｜><｜User｜>V<｜Assistant｜><think>\n");
    CHECK(*render_chat(chat_format::phi3, {{"system", "S"}, {"user", "U"}}) == "<|system|>\nS<|end|>\n<|user|>\nU<|end|>\n<|assistant|>\n");
    CHECK(*render_chat(chat_format::mistral, {{"system", "S"}, {"user", "U"}, {"assistant", "A"}, {"user", "V"}}) ==
          "<s>[INST] S\n\nU [/INST]A</s>[INST] V [/INST]");
    CHECK(*render_chat(chat_format::granite, {{"user", "U"}}) ==
          "<|start_of_role|>user<|end_of_role|>U<|end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>");
}

namespace {

tokenizer::vocab fixture_vocab(const char * name) {
    auto f = gguf::gguf_file::open(std::string(HEARTH_FIXTURES_DIR) + "/tokenizer/ggml-vocab-" + name + ".gguf");
    REQUIRE(f.has_value());
    auto v = tokenizer::load_vocab(*f);
    REQUIRE(v.has_value());
    return std::move(*v);
}

}  // namespace

TEST_CASE("llama2 (CodeLlama-Instruct): <<SYS>> in the first [INST], every turn trimmed as the template does",
          "[inference][chat]") {
    // The CodeLlama-Instruct template's shape (written here): BOS before each [INST], the system
    // message inside the first one, content | trim.
    const std::string tmpl =
        "{% if messages[0]['role'] == 'system' %}{% set system_message = messages[0]['content'] %}{% endif %}"
        "{% for message in loop_messages %}{% if loop.index0 == 0 and system_message != false %}"
        "{% set content = '<<SYS>>\\n' + system_message + '\\n<</SYS>>\\n\\n' + message['content'] %}{% endif %}"
        "{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content | trim + ' [/INST]' }}"
        "{% elif message['role'] == 'assistant' %}{{ ' '  + content | trim + ' ' + eos_token }}{% endif %}{% endfor %}";
    CHECK(*detect_chat_format(tmpl) == chat_format::llama2);
    CHECK(*render_chat(chat_format::llama2, {{"system", "S"}, {"user", "U"}, {"assistant", "A"}, {"user", "V"}}) ==
          "<s>[INST] <<SYS>>\nS\n<</SYS>>\n\nU [/INST] A </s><s>[INST] V [/INST]");
    CHECK(*render_chat(chat_format::llama2, {{"user", "\n  U \n"}, {"assistant", " A\n"}, {"user", "V\n"}}) ==
          "<s>[INST] U [/INST] A </s><s>[INST] V [/INST]");
    // On a Llama vocabulary (CodeLlama's is this one plus its FIM tokens) the markers are BOS and EOS.
    auto f = gguf::gguf_file::open(std::string(HEARTH_FIXTURES_DIR) + "/tokenizer/ggml-vocab-llama-spm.gguf");
    REQUIRE(f.has_value());
    auto v = tokenizer::load_vocab(*f);
    REQUIRE(v.has_value());
    CHECK(check_chat_format(chat_format::llama2, *v));
    const auto ids = v->tokenize(*render_chat(chat_format::llama2, {{"user", "U"}, {"assistant", "A"}, {"user", "V"}}), false, true);
    CHECK(std::count(ids.begin(), ids.end(), v->bos()) == 2);
    CHECK(std::count(ids.begin(), ids.end(), v->eos()) == 1);
    CHECK(ids.front() == v->bos());
}

TEST_CASE("a format is chosen only where the vocabulary has its tokens", "[inference][chat]") {
    const auto spm = fixture_vocab("llama-spm");          // <s>, </s> only
    const auto phi3 = fixture_vocab("phi-3");             // <|system|>, <|user|>, <|assistant|>, <|end|>
    const auto deepseek_coder = fixture_vocab("deepseek-coder");   // <｜begin▁of▁sentence｜>, <|User|> (ASCII bars)

    // --chat-template with a format whose special tokens the vocabulary lacks is refused, by name.
    auto chatml_on_spm = choose_chat_format("chatml", "", spm);
    REQUIRE_FALSE(chatml_on_spm.has_value());
    CHECK(chatml_on_spm.message().find("<|im_start|>") != std::string::npos);
    CHECK(choose_chat_format("llama2", "", spm)->format == chat_format::llama2);

    // No template: the family whose turn tokens the vocabulary has, and the reason says so.
    auto phi = choose_chat_format("", "", phi3);
    REQUIRE(phi.has_value());
    CHECK(phi->format == chat_format::phi3);
    CHECK(phi->reason.find("no tokenizer.chat_template") != std::string::npos);
    CHECK(phi->reason.find("<|assistant|>") != std::string::npos);

    // A ChatML template over a vocabulary without ChatML's tokens falls back to the vocabulary's.
    auto mismatch = choose_chat_format("", "<|im_start|>{{ c }}<|im_end|>", phi3);
    REQUIRE(mismatch.has_value());
    CHECK(mismatch->format == chat_format::phi3);
    CHECK(mismatch->reason.find("lacks its tokens") != std::string::npos);

    // Nothing to go on: an error, never a format whose tokens do not exist ([INST] is never guessed).
    CHECK_FALSE(choose_chat_format("", "", spm).has_value());
    auto ds = choose_chat_format("", "", deepseek_coder);
    REQUIRE_FALSE(ds.has_value());
    CHECK(ds.message().find("--chat-template") != std::string::npos);
}

TEST_CASE("a DeepSeek-R1-distill-style model: the prompt is built from <｜User｜> and <｜Assistant｜>",
          "[inference][chat]") {
    // The model that once failed: its template is not ChatML, and <|im_start|> is no token of it.
    testing::temp_dir dir;
    testing::run_python("write_arch_models.py", testing::quoted(dir.path.string()) + " > /dev/null");
    load_options opts;
    opts.model_path = (dir.path / "deepseek-r1-chat.gguf").string();
    opts.n_threads = 1;
    auto lm = loaded_model::load(opts);
    REQUIRE(lm.has_value());
    REQUIRE((*lm)->chat().has_value());
    CHECK(*(*lm)->chat() == chat_format::deepseek_r1);
    CHECK((*lm)->chat_reason().find("tokenizer.chat_template matches deepseek-r1") != std::string::npos);

    const auto & v = (*lm)->vocab();
    const token_id user = v.find_token("<｜User｜>"), assistant = v.find_token("<｜Assistant｜>");
    const token_id bos = v.find_token("<｜begin▁of▁sentence｜>"), think = v.find_token("<think>");
    REQUIRE(user != k_no_token);
    REQUIRE(assistant != k_no_token);
    auto text = render_chat(*(*lm)->chat(), {{"user", "Hello there"}});
    REQUIRE(text.has_value());
    const auto ids = v.tokenize(*text, /*add_special=*/false, /*parse_special=*/true);
    REQUIRE(ids.size() >= 5);
    CHECK(ids[0] == bos);
    CHECK(ids[1] == user);
    const auto nl = v.tokenize("\n", false, false);
    REQUIRE(ids.size() > 3 + nl.size());
    const size_t a = ids.size() - 2 - nl.size();
    CHECK(ids[a] == assistant);
    CHECK(ids[a + 1] == think);
    CHECK(std::count(ids.begin(), ids.end(), user) == 1);
    // The end of a turn is the end-of-generation token.
    CHECK(v.is_eog(v.find_token(std::string(chat_end_of_turn(chat_format::deepseek_r1)))));

    // ChatML on this vocabulary is refused at load, naming the tokens it lacks.
    opts.chat_template = "chatml";
    auto chatml = loaded_model::load(opts);
    REQUIRE_FALSE(chatml.has_value());
    CHECK(chatml.message().find("<|im_start|>") != std::string::npos);
}
