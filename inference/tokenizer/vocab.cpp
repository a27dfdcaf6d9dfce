// vocab: accessors and decoding (ids back to bytes).
#include <algorithm>

#include "inference/tokenizer/vocab_impl.h"

namespace hearth::inference::tokenizer {

vocab::vocab(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
vocab::vocab(vocab &&) noexcept = default;
vocab & vocab::operator=(vocab &&) noexcept = default;
vocab::~vocab() = default;

std::string vocab::piece(token_id id, bool render_special) const {
    if (id < 0 || id >= impl_->n_tokens()) return {};
    if (!render_special && (impl_->tokens[id].attr & (attr_control | attr_unknown))) return {};
    return impl_->pieces[id];
}

std::string vocab::detokenize(std::span<const token_id> ids, bool remove_special, bool render_special) const {
    const impl & v = *impl_;
    // The space SPM put in front of the text goes away again, unless a BOS came first
    // (llama.cpp's llama_detokenize rule).
    bool strip_space = v.add_space_prefix;
    if (remove_special && v.add_bos && !ids.empty() && ids.front() == v.bos) {
        strip_space = false;
        ids = ids.subspan(1);
    }
    if (remove_special && v.add_eos && !ids.empty() && ids.back() == v.eos) ids = ids.first(ids.size() - 1);

    std::string out;
    for (const token_id id : ids) {
        std::string p = piece(id, render_special);
        if (strip_space && !p.empty() && p.front() == ' ') out.append(p, 1);
        else out += p;
        strip_space = false;
    }
    return out;
}

vocab_kind vocab::kind() const { return impl_->kind; }
std::string_view vocab::model() const { return impl_->model; }
std::string_view vocab::pre() const { return impl_->pre; }
int32_t vocab::n_tokens() const { return impl_->n_tokens(); }

std::string_view vocab::token_text(token_id id) const {
    if (id < 0 || id >= impl_->n_tokens()) return {};
    return impl_->tokens[id].text;
}

token_type vocab::type(token_id id) const {
    if (id < 0 || id >= impl_->n_tokens()) return token_type::undefined;
    const uint16_t a = impl_->tokens[id].attr;
    if (a & attr_byte) return token_type::byte;
    if (a & attr_unused) return token_type::unused;
    if (a & attr_control) return token_type::control;
    if (a & attr_user_defined) return token_type::user_defined;
    if (a & attr_unknown) return token_type::unknown;
    if (a & attr_normal) return token_type::normal;
    return token_type::undefined;
}

float vocab::score(token_id id) const {
    if (id < 0 || id >= impl_->n_tokens()) return 0.0f;
    return impl_->tokens[id].score;
}

token_id vocab::find_token(std::string_view text) const { return impl_->find(text); }

bool vocab::is_control(token_id id) const {
    if (id < 0 || id >= impl_->n_tokens()) return false;
    return (impl_->tokens[id].attr & (attr_control | attr_unknown)) != 0;
}

bool vocab::is_eog(token_id id) const {
    return id != k_no_token && std::binary_search(impl_->eog.begin(), impl_->eog.end(), id);
}

std::span<const token_id> vocab::eog_ids() const { return impl_->eog; }

token_id vocab::bos() const { return impl_->bos; }
token_id vocab::eos() const { return impl_->eos; }
token_id vocab::eot() const { return impl_->eot; }
token_id vocab::eom() const { return impl_->eom; }
token_id vocab::unk() const { return impl_->unk; }
token_id vocab::sep() const { return impl_->sep; }
token_id vocab::pad() const { return impl_->pad; }
token_id vocab::linefeed() const { return impl_->linefeed; }
token_id vocab::fim_pre() const { return impl_->fim_pre; }
token_id vocab::fim_suf() const { return impl_->fim_suf; }
token_id vocab::fim_mid() const { return impl_->fim_mid; }
token_id vocab::fim_pad() const { return impl_->fim_pad; }
token_id vocab::fim_rep() const { return impl_->fim_rep; }
token_id vocab::fim_sep() const { return impl_->fim_sep; }
bool vocab::fim_from_keys() const { return impl_->fim_from_keys; }
bool vocab::add_bos() const { return impl_->add_bos; }
bool vocab::add_eos() const { return impl_->add_eos; }
bool vocab::add_space_prefix() const { return impl_->add_space_prefix; }

}  // namespace hearth::inference::tokenizer
