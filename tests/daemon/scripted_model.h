// scripted_model: a deterministic model_service double for the daemon's tests (it lives in
// tests/ only). It "generates" a fixed transform of its input one piece at a time, sleeping
// per_token between pieces and checking the stop token before each, like the real engine:
//  - complete(): candidate k is "ok<k>_<bytes of prefix>_<bytes of suffix>" in single-line
//    mode, and "\n    body<k>();\n" + the suffix's first non-blank line in multi-line mode
//    (so suffix trimming has something to trim);
//  - chat(): "echo: " + the last user message, cut to n_predict pieces of one character;
//  - next_edit(): the window with the latest edit's word (what differs between its original
//    and updated line) replaced everywhere by the new word, one line per per_token; a
//    prefill_only call just records itself;
//  - a warm-up (fim_request::prefill_only) "evaluates" for warm_up_time, checking the stop
//    token every millisecond, and generates nothing; it is counted apart from complete().
// It records the calls so tests can check what the services sent.
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "daemon/engine/model_service.h"

namespace hearth::daemon::testing {

class scripted_model final : public model_service {
public:
    std::chrono::milliseconds per_token{1};
    std::chrono::milliseconds warm_up_time{0};

    result<completion> complete(const fim_request & req, std::stop_token stop, const piece_callback & on_piece) override {
        if (req.prefill_only) return warm_up(req, stop);
        {
            std::lock_guard lock(mu_);
            last_fim_ = req;
        }
        ++n_complete_;
        running_ = true;
        completion out;
        for (int k = 0; k < req.n_candidates; ++k) {
            std::string text;
            if (req.mode == completion_mode::single_line) {
                text = "ok" + std::to_string(k) + "_" + std::to_string(req.prefix.size()) + "_" + std::to_string(req.suffix.size());
            } else {
                text = "\n    body" + std::to_string(k) + "();\n" + first_nonblank_after_cursor_line(req.suffix);
            }
            completion_candidate c;
            for (size_t i = 0; i < text.size(); ++i) {
                if (stop.stop_requested()) {
                    ++n_stopped_;
                    running_ = false;
                    c.stop = stop_reason::cancelled;
                    out.candidates.push_back(c);
                    return out;
                }
                std::this_thread::sleep_for(per_token);
                c.text += text[i];
                if (k == 0 && on_piece) on_piece(std::string_view(&text[i], 1));
            }
            c.mean_logprob = -0.1 * (k + 1);
            out.candidates.push_back(std::move(c));
        }
        out.timings.n_prompt_tokens = static_cast<int32_t>(req.prefix.size() + req.suffix.size());
        running_ = false;
        return out;
    }

    result<chat_answer> chat(const chat_request & req, std::stop_token stop, const piece_callback & on_piece) override {
        {
            std::lock_guard lock(mu_);
            last_chat_ = req;
        }
        ++n_chat_;
        running_ = true;
        if (req.messages.empty()) {
            running_ = false;
            return fail("chat: no messages");
        }
        const std::string text = "echo: " + req.messages.back().content;
        chat_answer a;
        a.stop = stop_reason::end_of_generation;
        int32_t n = 0;
        for (size_t i = 0; i < text.size();) {
            if (stop.stop_requested()) {
                ++n_stopped_;
                a.stop = stop_reason::cancelled;
                break;
            }
            if (n++ >= req.n_predict) {
                a.stop = stop_reason::max_tokens;
                break;
            }
            // One UTF-8 character per piece, never half of one.
            size_t len = 1;
            const auto c = static_cast<unsigned char>(text[i]);
            if (c >= 0xF0) len = 4;
            else if (c >= 0xE0) len = 3;
            else if (c >= 0xC0) len = 2;
            std::this_thread::sleep_for(per_token);
            const std::string_view piece(text.data() + i, std::min(len, text.size() - i));
            a.text += piece;
            if (on_piece) on_piece(piece);
            i += len;
        }
        a.timings.n_generated = n;
        running_ = false;
        return a;
    }

    void release_document(std::string_view uri) override {
        std::lock_guard lock(mu_);
        released_.emplace_back(uri);
    }

    // One token per byte, the byte's value: enough for the HTTP API's /tokenize round trip.
    result<std::vector<int32_t>> tokenize(std::string_view text, bool, bool) const override {
        return std::vector<int32_t>(text.begin(), text.end());
    }
    result<std::string> detokenize(std::span<const int32_t> ids) const override {
        std::string s;
        for (int32_t id : ids) {
            if (id < 0 || id > 255) return fail("id ", id, " is outside [0, 255]");
            s += static_cast<char>(id);
        }
        return s;
    }

    model_status status() const override {
        model_status s;
        s.loaded = true;
        s.model_name = "scripted";
        s.mapped_bytes = 1234;
        s.n_slots = static_cast<int32_t>(n_complete_.load());
        return s;
    }

    fim_request last_fim() const { std::lock_guard lock(mu_); return last_fim_; }
    result<next_edit_answer> next_edit(const next_edit_request & req, std::stop_token stop) override {
        {
            std::lock_guard lock(mu_);
            last_next_edit_ = req;
        }
        next_edit_answer out;
        out.family = "scripted";
        if (req.prefill_only) {
            ++n_next_edit_warm_ups_;
            return out;
        }
        ++n_next_edit_;
        std::string window = req.window;
        if (!req.edits.empty()) {
            std::string a = req.edits.back().original, b = req.edits.back().updated;
            size_t head = 0;
            while (head < a.size() && head < b.size() && a[head] == b[head]) ++head;
            while (a.size() > head && b.size() > head && a.back() == b.back()) a.pop_back(), b.pop_back();
            const std::string from = a.substr(head), to = b.substr(head);
            for (size_t at = 0; !from.empty() && (at = window.find(from, at)) != std::string::npos; at += to.size())
                window.replace(at, from.size(), to);
        }
        for (char ch : window) {
            if (ch != '\n') continue;
            if (stop.stop_requested()) {
                ++n_stopped_;
                out.stop = stop_reason::cancelled;
                return out;
            }
            std::this_thread::sleep_for(per_token);
        }
        out.window = window;
        return out;
    }
    next_edit_request last_next_edit() const { std::lock_guard lock(mu_); return last_next_edit_; }
    int n_next_edit() const { return n_next_edit_.load(); }
    int n_next_edit_warm_ups() const { return n_next_edit_warm_ups_.load(); }

    fim_request last_warm_up() const { std::lock_guard lock(mu_); return last_warm_up_; }
    int n_warm_ups() const { return n_warm_ups_.load(); }
    int n_warm_ups_stopped() const { return n_warm_ups_stopped_.load(); }
    chat_request last_chat() const { std::lock_guard lock(mu_); return last_chat_; }
    std::vector<std::string> released() const { std::lock_guard lock(mu_); return released_; }
    int n_complete() const { return n_complete_.load(); }
    int n_chat() const { return n_chat_.load(); }
    int n_stopped() const { return n_stopped_.load(); }
    bool running() const { return running_.load(); }

private:
    result<completion> warm_up(const fim_request & req, std::stop_token stop) {
        {
            std::lock_guard lock(mu_);
            last_warm_up_ = req;
        }
        ++n_warm_ups_;
        const auto end = std::chrono::steady_clock::now() + warm_up_time;
        while (std::chrono::steady_clock::now() < end) {
            if (stop.stop_requested()) {
                ++n_warm_ups_stopped_;
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        return completion{};
    }

    static std::string first_nonblank_after_cursor_line(const std::string & suffix) {
        size_t pos = suffix.find('\n');
        while (pos != std::string::npos && pos + 1 < suffix.size()) {
            const size_t e = suffix.find('\n', pos + 1);
            const std::string line = suffix.substr(pos + 1, e == std::string::npos ? std::string::npos : e - pos - 1);
            if (line.find_first_not_of(" \t\r") != std::string::npos) return line;
            pos = e;
        }
        return "";
    }

    mutable std::mutex mu_;
    fim_request last_fim_, last_warm_up_;
    std::atomic<int> n_warm_ups_{0}, n_warm_ups_stopped_{0};
    chat_request last_chat_;
    std::vector<std::string> released_;
    std::atomic<int> n_complete_{0}, n_chat_{0}, n_stopped_{0};
    std::atomic<int> n_next_edit_{0}, n_next_edit_warm_ups_{0};
    next_edit_request last_next_edit_;
    std::atomic<bool> running_{false};
};

}  // namespace hearth::daemon::testing
