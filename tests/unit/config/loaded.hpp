#pragma once
// Test helper: a parsed document kept together with its diagnostics.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "drivelab/config/document.hpp"

namespace drivelab::config::testing {

struct LoadedDocument {
  LoadedDocument(const std::string& text, std::string name) : doc(Document::load_string(text, std::move(name), diags)) {
    EXPECT_TRUE(doc.loaded()) << diags.to_string();
  }
  Node root() { return doc.root(diags); }
  /// Every diagnostic as "file:line:column: path: message".
  std::vector<std::string> lines() const {
    std::vector<std::string> out;
    for (const Diagnostic& d : diags.items()) out.push_back(d.to_string());
    return out;
  }
  Diagnostics diags;
  Document doc;
};

}  // namespace drivelab::config::testing
