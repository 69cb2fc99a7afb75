#include "tools/analyze/cascade_config_file.h"

#include <cctype>
#include <cstdlib>
#include <vector>

#include "core/status_macros.h"
#include "core/strings.h"
#include "protocol/model_config_parser.h"

namespace brigade::analyze {
namespace {

// A token of protobuf text format: a word (field name or scalar), a quoted string or one
// punctuation character, with its place in the text.
struct Token {
  size_t begin = 0;
  size_t end = 0;
};

// Splits `text` into tokens, skipping blanks and `#` comments. Strings keep their quotes and
// escapes, so a brace inside one is not taken for structure.
std::vector<Token> Tokenize(std::string_view text) {
  std::vector<Token> tokens;
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (c == '"' || c == '\'') {
      const size_t begin = i++;
      while (i < text.size() && text[i] != c) i += text[i] == '\\' ? 2 : 1;
      i = std::min(i + 1, text.size());
      tokens.push_back({begin, i});
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' ||
               c == '+') {
      const size_t begin = i;
      while (i < text.size() &&
             (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_' ||
              text[i] == '.' || text[i] == '-' || text[i] == '+')) {
        ++i;
      }
      tokens.push_back({begin, i});
    } else {
      tokens.push_back({i, i + 1});
      ++i;
    }
  }
  return tokens;
}

std::string_view TextOf(std::string_view text, const Token& token) {
  return text.substr(token.begin, token.end - token.begin);
}

// The index of the first token of the block opened by field `name` at nesting `depth` (of the
// range [from, to)), and the index of its closing brace; -1 when absent.
struct Block {
  int64_t open = -1;   // the `{` or `<`
  int64_t close = -1;  // its match
};

Block FindBlock(std::string_view text, const std::vector<Token>& tokens, int64_t from, int64_t to,
                std::string_view name) {
  int depth = 0;
  for (int64_t i = from; i < to; ++i) {
    const std::string_view token = TextOf(text, tokens[i]);
    if (token == "{" || token == "<") {
      ++depth;
    } else if (token == "}" || token == ">") {
      --depth;
    } else if (depth == 0 && token == name) {
      int64_t open = i + 1;
      if (open < to && TextOf(text, tokens[open]) == ":") ++open;
      if (open >= to) return {};
      const std::string_view brace = TextOf(text, tokens[open]);
      if (brace != "{" && brace != "<") continue;
      int inner = 0;
      for (int64_t j = open; j < to; ++j) {
        const std::string_view t = TextOf(text, tokens[j]);
        if (t == "{" || t == "<") ++inner;
        if (t == "}" || t == ">") {
          if (--inner == 0) return {open, j};
        }
      }
      return {};
    }
  }
  return {};
}

}  // namespace

absl::StatusOr<std::string> RewriteCascadeThreshold(std::string_view text, std::string_view source,
                                                    std::string_view router,
                                                    std::string_view directory_name,
                                                    std::string_view threshold) {
  BRIGADE_ASSIGN_OR_RETURN(protocol::ParsedConfig before,
                           protocol::ParseModelConfigText(text, source));
  const config::ModelConfig& config = before.config;
  const std::string_view name = config.name().empty() ? directory_name : config.name();
  if (name != router) {
    return absl::InvalidArgumentError(
        StrCat(source, " is the config of model '", name, "', not of router '", router, "'"));
  }
  if (config.platform() != "brigade_router" || !config.routing().has_cascade()) {
    return absl::InvalidArgumentError(
        StrCat(source, " is not a brigade_router with a routing.cascade section"));
  }

  const std::vector<Token> tokens = Tokenize(text);
  const int64_t count = static_cast<int64_t>(tokens.size());
  const Block routing = FindBlock(text, tokens, 0, count, "routing");
  const Block cascade = routing.open < 0
                            ? Block{}
                            : FindBlock(text, tokens, routing.open + 1, routing.close, "cascade");
  if (cascade.open < 0) {
    return absl::InvalidArgumentError(
        StrCat(source, ": cannot find the text of routing { cascade { ... } }"));
  }
  // `threshold: VALUE` directly inside the cascade block (the parser kept the last one, so do
  // the same).
  int64_t value = -1;
  int depth = 0;
  for (int64_t i = cascade.open + 1; i < cascade.close; ++i) {
    const std::string_view token = TextOf(text, tokens[i]);
    if (token == "{" || token == "<") ++depth;
    if (token == "}" || token == ">") --depth;
    if (depth == 0 && token == "threshold" && i + 2 < cascade.close &&
        TextOf(text, tokens[i + 1]) == ":") {
      value = i + 2;
    }
  }
  std::string out;
  if (value >= 0) {
    out = StrCat(text.substr(0, tokens[value].begin), threshold, text.substr(tokens[value].end));
  } else {
    const size_t at = tokens[cascade.close].begin;
    out = StrCat(text.substr(0, at), "threshold: ", threshold, " ", text.substr(at));
  }

  absl::StatusOr<protocol::ParsedConfig> after = protocol::ParseModelConfigText(out, source);
  const double wanted = std::strtod(std::string(threshold).c_str(), nullptr);
  if (!after.ok() || after->config.routing().cascade().threshold() != wanted) {
    return absl::InvalidArgumentError(
        StrCat(source, ": writing threshold ", threshold, " would not give a config with it",
               after.ok() ? "" : StrCat(" (", after.status().message(), ")")));
  }
  return out;
}

}  // namespace brigade::analyze
