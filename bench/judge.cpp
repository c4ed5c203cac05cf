// judge: a benchmark script's verdict on its pair ratios (ours / peer, one ratio per pair of runs
// next to each other in time), as one line. The interval is core/inference.hpp's judge_pairs
// (Student t on the logs of the ratios); docs/confidence.md, "Benchmark verdicts".
//
//   judge --bound B --rule at_least|at_most|not_below [--label TEXT] [--level 0.95] RATIO...
//
//   $ judge --bound 1.15 --rule at_least --label "tpmC ours / NOPM HammerDB" 1.21 1.27 1.18
//   tpmC ours / NOPM HammerDB: 1.219x [1.111x, 1.338x] (95%, 3 pairs), target >= 1.15x: UNRESOLVED
//       (5 pairs would resolve it)                                            [one line, wrapped here]
//
// One ratio gives no interval: UNRESOLVED, with the advice to run pairs (the number that would
// resolve it needs the spread of at least two). Exit status 0 whatever the verdict (the scripts
// decide theirs), 2 on bad input.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "drivelab/core/inference.hpp"

namespace {

using namespace drivelab::inference;

constexpr int kBadInput = 2;

[[noreturn]] void usage(const std::string& message) {
  std::fprintf(stderr,
               "judge: %s\nusage: judge --bound B --rule at_least|at_most|not_below [--label TEXT] [--level 0.95] "
               "RATIO...\n",
               message.c_str());
  std::exit(kBadInput);
}

double number(std::string_view what, const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v))
    usage(fmt::format("{}: '{}' is not a finite number", what, text));
  return v;
}

std::string target_text(Rule rule, double bound) {
  switch (rule) {
    case Rule::at_least: return fmt::format(">= {:.2f}x", bound);
    case Rule::at_most: return fmt::format("<= {:.2f}x", bound);
    case Rule::not_below: return fmt::format("not below {:.2f}x (interval reaching it or above)", bound);
  }
  return "?";
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<double> bound;
  std::optional<Rule> rule;
  std::string label = "ours/peer";
  double level = 0.95;
  std::vector<double> ratios;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--bound") {
      bound = number("--bound", value());
    } else if (arg == "--rule") {
      const std::string word = value();
      rule = drivelab::value_of(kRuleNames, word);
      if (!rule) usage(fmt::format("--rule: '{}' is not at_least, at_most or not_below", word));
    } else if (arg == "--label") {
      label = value();
    } else if (arg == "--level") {
      level = number("--level", value());
    } else if (arg == "-h" || arg == "--help") {
      std::printf(
          "judge --bound B --rule at_least|at_most|not_below [--label TEXT] [--level 0.95] RATIO...\n"
          "The geometric mean of the pair ratios, its interval (Student t on the logs), n, and PASS / FAIL /\n"
          "UNRESOLVED against the bound (docs/confidence.md, Benchmark verdicts). Exit 0; 2 on bad input.\n");
      return 0;
    } else if (arg.size() > 1 && arg[0] == '-' && arg[1] == '-') {
      usage(fmt::format("unknown option {}", arg));
    } else {
      const double r = number(fmt::format("ratio {}", ratios.size() + 1), arg);
      if (!(r > 0)) usage(fmt::format("ratio {}: {} is not > 0 (ours / peer)", ratios.size() + 1, arg));
      ratios.push_back(r);
    }
  }
  if (!bound) usage("--bound is required");
  if (!rule) usage("--rule is required");
  if (ratios.empty()) usage("no ratios given");
  const std::string target = target_text(*rule, *bound);
  try {
    if (ratios.size() == 1) {
      // Validate as judge_pairs would, then say what one pair cannot tell.
      if (!(*bound > 0)) usage(fmt::format("--bound: {} is not > 0", *bound));
      std::printf(
          "%s: %.3fx (1 pair, no interval), target %s: UNRESOLVED (one pair shows no spread: run 3 or more pairs; "
          "their spread gives the number that would resolve it)\n",
          label.c_str(), ratios[0], target.c_str());
      return 0;
    }
    const PairVerdict v = judge_pairs(ratios, *bound, *rule, level);
    std::string line = fmt::format("{}: {:.3f}x [{:.3f}x, {:.3f}x] ({:g}%, {} pairs), target {}: {}", label, v.ratio,
                                   v.ci.low, v.ci.high, level * 100, v.n, target, to_string(v.verdict));
    if (v.verdict == BoundVerdict::unresolved) {
      if (v.pairs_needed)
        line += fmt::format(" ({} pairs would resolve it)", *v.pairs_needed);
      else
        line += fmt::format(" (no number of pairs up to {} would resolve it: the mean is at or very near the bound)",
                            kMaxPairsNeeded);
    }
    std::printf("%s\n", line.c_str());
  } catch (const std::invalid_argument& e) {
    usage(e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "judge: %s\n", e.what());
    return kBadInput;
  }
  return 0;
}
