// Helpers shared by the golden tests: reading llama.cpp's JSON outputs and loading a model
// the way the engine needs it (file, hyperparameters and weights, vocabulary).
#pragma once

#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "inference/gguf/gguf_file.h"
#include "inference/model.h"
#include "inference/tokenizer/vocab.h"

namespace hearth::inference::testing {

inline boost::json::value read_json_file(const std::string & path) {
    std::ifstream in(path);
    REQUIRE(in.good());
    std::stringstream ss;
    ss << in.rdbuf();
    return boost::json::parse(ss.str());
}

inline std::vector<int32_t> json_ids(const boost::json::value & v) {
    std::vector<int32_t> out;
    for (const auto & x : v.as_array()) out.push_back(static_cast<int32_t>(x.to_number<int64_t>()));
    return out;
}

// The model's views point into the file's mapping, which stays put when the struct moves.
struct test_model {
    gguf::gguf_file file;
    model mdl;
    tokenizer::vocab voc;
};

inline test_model load_test_model(const std::string & path) {
    auto file = gguf::gguf_file::open(path);
    REQUIRE(file.has_value());
    auto mdl = model::load(*file);
    REQUIRE(mdl.has_value());
    auto voc = tokenizer::load_vocab(*file);
    REQUIRE(voc.has_value());
    return test_model{std::move(*file), std::move(*mdl), std::move(*voc)};
}

}  // namespace hearth::inference::testing
