// fallback_model_service: the remote engine first, the local model when the remote cannot
// answer (unreachable, a refused key, a malformed stream, over its time budget, broken off
// mid-answer). It says which answered, and why the remote did not, in status().engine,
// which hearth/status and `hearth status` show, and logs each failure once per kind.
// After an unreachable remote the next requests go local at once for a while (retry_after),
// so an offline laptop does not wait on a connect per keystroke.
// A chat whose remote answer broke off after pieces reached the editor is not restarted
// locally (the editor already shows them): it ends with the error.
// Thread-safety: as model_service; the engine fields are guarded by a mutex.
#pragma once

#include <memory>
#include <mutex>

#include "daemon/engine/remote_model_service.h"
#include "daemon/settings/config.h"

namespace hearth::daemon {

class fallback_model_service final : public model_service {
public:
    // local may be null (no model found): the remote's errors are then the answers.
    fallback_model_service(std::unique_ptr<remote_model_service> remote, std::unique_ptr<model_service> local,
                           std::chrono::milliseconds retry_after = std::chrono::milliseconds(10000));

    result<completion> complete(const fim_request & req, std::stop_token stop, const piece_callback & on_piece) override;
    result<chat_answer> chat(const chat_request & req, std::stop_token stop, const piece_callback & on_piece) override;
    // Always the local model's: the remote APIs have no next-edit request.
    result<next_edit_answer> next_edit(const next_edit_request & req, std::stop_token stop) override {
        return local_->next_edit(req, stop);
    }
    void release_document(std::string_view uri) override;
    model_status status() const override;
    result<std::vector<int32_t>> tokenize(std::string_view text, bool add_special, bool parse_special) const override;
    result<std::string> detokenize(std::span<const int32_t> ids) const override;
    result<completion_prompt> completion_prompt_text(const fim_request & req) const override;
    hearth::status persist() override;

private:
    bool remote_resting() const;   // an unreachable remote is not tried again yet
    // The local model answers while the remote rests (counted as a fallback); false: try the remote.
    bool skip_resting_remote();
    // Records the remote's outcome; true when the local model should answer instead.
    bool record(bool ok, const std::string & error, double ms);

    std::unique_ptr<remote_model_service> remote_;
    std::unique_ptr<model_service> local_;
    std::chrono::milliseconds retry_after_;
    mutable std::mutex mu_;
    engine_state state_;                                  // guarded by mu_
    std::chrono::steady_clock::time_point resting_until_; // guarded by mu_
    std::string last_logged_;                             // guarded by mu_
};

// The daemon's model for engine = remote: the remote of the settings (its API key read from
// remote-key-file) in front of local. An error names the setting that is wrong.
result<std::unique_ptr<model_service>> make_remote_engine(const remote_settings & rs, std::unique_ptr<model_service> local);

}  // namespace hearth::daemon
