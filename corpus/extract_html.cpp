// Visible text of HTML through gumbo.
//
// Rules: script, style, head, noscript, template, svg, iframe and elements with
// a `hidden` attribute contribute nothing; runs of whitespace collapse to one
// space (except inside <pre>); block elements end the line (paragraph-like ones
// leave a blank line); <br> breaks the line; h1-h6 become "#"-prefixed lines
// so the chunker sees the heading structure; list items start with "- ";
// table cells are separated by a tab.
#include <gumbo.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <vector>

#include "common/text.h"
#include "corpus/extract_formats.h"

namespace ragd::corpus::internal {
namespace {

bool IsSkipped(const GumboNode* node) {
  if (node->type == GUMBO_NODE_TEMPLATE) return true;
  if (node->type != GUMBO_NODE_ELEMENT) return false;
  switch (node->v.element.tag) {
    case GUMBO_TAG_SCRIPT:
    case GUMBO_TAG_STYLE:
    case GUMBO_TAG_HEAD:
    case GUMBO_TAG_NOSCRIPT:
    case GUMBO_TAG_TEMPLATE:
    case GUMBO_TAG_SVG:
    case GUMBO_TAG_IFRAME:
    case GUMBO_TAG_OBJECT:
    case GUMBO_TAG_CANVAS:
      return true;
    default:
      return gumbo_get_attribute(&node->v.element.attributes, "hidden") != nullptr;
  }
}

// Newlines a tag asks for around itself: 2 = paragraph, 1 = line, 0 = inline.
int BreakAround(GumboTag tag) {
  switch (tag) {
    case GUMBO_TAG_P:
    case GUMBO_TAG_H1:
    case GUMBO_TAG_H2:
    case GUMBO_TAG_H3:
    case GUMBO_TAG_H4:
    case GUMBO_TAG_H5:
    case GUMBO_TAG_H6:
    case GUMBO_TAG_UL:
    case GUMBO_TAG_OL:
    case GUMBO_TAG_DL:
    case GUMBO_TAG_TABLE:
    case GUMBO_TAG_BLOCKQUOTE:
    case GUMBO_TAG_PRE:
    case GUMBO_TAG_SECTION:
    case GUMBO_TAG_ARTICLE:
    case GUMBO_TAG_HEADER:
    case GUMBO_TAG_FOOTER:
    case GUMBO_TAG_NAV:
    case GUMBO_TAG_ASIDE:
    case GUMBO_TAG_MAIN:
    case GUMBO_TAG_FIGURE:
    case GUMBO_TAG_FORM:
    case GUMBO_TAG_HR:
    case GUMBO_TAG_ADDRESS:
    case GUMBO_TAG_DETAILS:
    case GUMBO_TAG_FIELDSET:
      return 2;
    case GUMBO_TAG_DIV:
    case GUMBO_TAG_LI:
    case GUMBO_TAG_DT:
    case GUMBO_TAG_DD:
    case GUMBO_TAG_TR:
    case GUMBO_TAG_CAPTION:
    case GUMBO_TAG_FIGCAPTION:
    case GUMBO_TAG_SUMMARY:
    case GUMBO_TAG_OPTION:
    case GUMBO_TAG_LEGEND:
    case GUMBO_TAG_BODY:
      return 1;
    default:
      return 0;
  }
}

int HeadingLevel(GumboTag tag) {
  switch (tag) {
    case GUMBO_TAG_H1:
      return 1;
    case GUMBO_TAG_H2:
      return 2;
    case GUMBO_TAG_H3:
      return 3;
    case GUMBO_TAG_H4:
      return 4;
    case GUMBO_TAG_H5:
      return 5;
    case GUMBO_TAG_H6:
      return 6;
    default:
      return 0;
  }
}

bool IsHtmlSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

// Accumulates text with collapsed whitespace and pending line breaks.
class TextBuilder {
 public:
  void Break(int newlines) {
    pending_breaks_ = std::max(pending_breaks_, newlines);
    pending_space_ = false;
  }
  // `prefix` (e.g. "- ") goes before the next text on the current line.
  void Prefix(std::string prefix) { prefix_ = std::move(prefix); }
  void Separator(char c) {
    if (!out_.empty() && out_.back() != '\n' && pending_breaks_ == 0) pending_sep_ = c;
  }
  void Text(std::string_view s, bool preformatted) {
    for (char c : s) {
      if (preformatted) {
        if (c == '\n') {
          FlushPending();
          out_ += '\n';
          continue;
        }
        FlushPending();
        out_ += c;
      } else if (IsHtmlSpace(c)) {
        pending_space_ = true;
      } else {
        FlushPending();
        out_ += c;
      }
    }
  }
  std::string Take() { return std::move(out_); }

 private:
  void FlushPending() {
    if (!out_.empty() && pending_breaks_ > 0) {
      while (!out_.empty() && out_.back() == ' ') out_.pop_back();
      int have = 0;
      for (size_t i = out_.size(); i > 0 && out_[i - 1] == '\n'; --i) ++have;
      for (; have < pending_breaks_; ++have) out_ += '\n';
    } else if (pending_sep_ != 0) {
      out_ += pending_sep_;
    } else if (pending_space_ && !out_.empty() && out_.back() != '\n' && out_.back() != ' ') {
      out_ += ' ';
    }
    pending_breaks_ = 0;
    pending_space_ = false;
    pending_sep_ = 0;
    out_ += prefix_;
    prefix_.clear();
  }

  std::string out_;
  int pending_breaks_ = 0;
  bool pending_space_ = false;
  char pending_sep_ = 0;
  std::string prefix_;
};

std::string CollapsedText(const GumboNode* node) {
  TextBuilder b;
  std::vector<const GumboNode*> stack{node};
  std::vector<const GumboNode*> order;
  // Depth-first, children in document order.
  while (!stack.empty()) {
    const GumboNode* n = stack.back();
    stack.pop_back();
    if (n->type == GUMBO_NODE_TEXT || n->type == GUMBO_NODE_CDATA || n->type == GUMBO_NODE_WHITESPACE) {
      b.Text(n->v.text.text, false);
    } else if (n->type == GUMBO_NODE_ELEMENT && !IsSkipped(n)) {
      const GumboVector& kids = n->v.element.children;
      for (unsigned i = kids.length; i > 0; --i)
        stack.push_back(static_cast<const GumboNode*>(kids.data[i - 1]));
    }
  }
  return b.Take();
}

const GumboNode* FindFirst(const GumboNode* root, GumboTag tag) {
  std::vector<const GumboNode*> stack{root};
  while (!stack.empty()) {
    const GumboNode* n = stack.back();
    stack.pop_back();
    if (n->type != GUMBO_NODE_ELEMENT) continue;
    if (n->v.element.tag == tag) return n;
    const GumboVector& kids = n->v.element.children;
    for (unsigned i = kids.length; i > 0; --i)
      stack.push_back(static_cast<const GumboNode*>(kids.data[i - 1]));
  }
  return nullptr;
}

// Position of the first "</name" (name in lower case, matched without regard
// to case) at or after `from`, npos when none. Searched in place: lowering a
// copy of the rest of the document for every <script> made many of them
// quadratic.
size_t FindEndTag(std::string_view html, size_t from, std::string_view name) {
  for (size_t i = html.find("</", from); i != std::string_view::npos; i = html.find("</", i + 2)) {
    if (html.size() - i - 2 < name.size()) return std::string_view::npos;
    bool same = true;
    for (size_t k = 0; k < name.size() && same; ++k) {
      char c = html[i + 2 + k];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      same = c == name[k];
    }
    if (same) return i;
  }
  return std::string_view::npos;
}

// Elements that never nest: void elements, and those whose end tag may be
// left out (the parser closes them implicitly).
bool NeverNests(std::string_view name) {
  static constexpr std::string_view kNames[] = {
      "area",  "base",  "br",    "col",      "embed", "hr", "img", "input", "link", "meta",   "source",
      "track", "wbr",   "p",     "li",       "dt",    "dd", "tr",  "td",    "th",   "option", "optgroup",
      "tbody", "thead", "tfoot", "colgroup", "rb",    "rt", "rp",  "html",  "head", "body",   "caption"};
  return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
}

// Cheap upper estimate of the element nesting depth, from tags alone.
int EstimateDepth(std::string_view html) {
  int depth = 0, max_depth = 0;
  for (size_t i = html.find('<'); i != std::string_view::npos && i + 1 < html.size();
       i = html.find('<', i + 1)) {
    if (html.compare(i, 4, "<!--") == 0) {
      i = html.find("-->", i + 4);
      if (i == std::string_view::npos) break;
      continue;
    }
    const bool closing = html[i + 1] == '/';
    size_t name_start = i + 1 + (closing ? 1 : 0);
    size_t name_end = name_start;
    while (name_end < html.size() && std::isalnum(static_cast<unsigned char>(html[name_end]))) ++name_end;
    if (name_end == name_start) continue;
    const std::string name = AsciiLower(html.substr(name_start, name_end - name_start));
    const size_t tag_end = html.find('>', name_end);
    if (tag_end == std::string_view::npos) break;
    if (closing) {
      if (!NeverNests(name) && depth > 0) --depth;
    } else if (name == "script" || name == "style" || name == "textarea" || name == "title") {
      // Raw text up to the matching end tag.
      const size_t close = FindEndTag(html, tag_end, name);
      if (close == std::string_view::npos) break;
      i = close;
    } else if (!NeverNests(name) && html[tag_end - 1] != '/') {
      max_depth = std::max(max_depth, ++depth);
    }
  }
  return max_depth;
}

}  // namespace

Result<FormatText> ExtractHtml(std::string_view html) {
  if (EstimateDepth(html) > kMaxHtmlDepth) {
    return Status::InvalidArgument("HTML elements nested more than " + std::to_string(kMaxHtmlDepth) +
                                   " deep");
  }
  std::unique_ptr<GumboOutput, void (*)(GumboOutput*)> output(
      gumbo_parse_with_options(&kGumboDefaultOptions, html.data(), html.size()),
      [](GumboOutput* o) { gumbo_destroy_output(&kGumboDefaultOptions, o); });
  FormatText result;
  if (const GumboNode* title = FindFirst(output->root, GUMBO_TAG_TITLE)) {
    // <title> holds raw text; collapse it by hand.
    for (unsigned i = 0; i < title->v.element.children.length; ++i) {
      const auto* kid = static_cast<const GumboNode*>(title->v.element.children.data[i]);
      if (kid->type == GUMBO_NODE_TEXT || kid->type == GUMBO_NODE_WHITESPACE) {
        TextBuilder b;
        b.Text(kid->v.text.text, false);
        result.title += b.Take();
      }
    }
  }
  if (result.title.empty()) {
    if (const GumboNode* h1 = FindFirst(output->root, GUMBO_TAG_H1)) result.title = CollapsedText(h1);
  }

  // Iterative walk: a frame is entered once (open) and left once (close).
  struct Frame {
    const GumboNode* node;
    bool entered;
  };
  TextBuilder b;
  int pre_depth = 0;
  std::vector<Frame> stack{{output->root, false}};
  while (!stack.empty()) {
    Frame& f = stack.back();
    const GumboNode* n = f.node;
    if (n->type == GUMBO_NODE_TEXT || n->type == GUMBO_NODE_CDATA || n->type == GUMBO_NODE_WHITESPACE) {
      b.Text(n->v.text.text, pre_depth > 0);
      stack.pop_back();
      continue;
    }
    if (n->type != GUMBO_NODE_ELEMENT && n->type != GUMBO_NODE_DOCUMENT) {
      stack.pop_back();  // comments
      continue;
    }
    if (n->type == GUMBO_NODE_ELEMENT && IsSkipped(n)) {
      stack.pop_back();
      continue;
    }
    const GumboTag tag = n->type == GUMBO_NODE_ELEMENT ? n->v.element.tag : GUMBO_TAG_UNKNOWN;
    if (!f.entered) {
      f.entered = true;
      const int breaks = BreakAround(tag);
      if (breaks > 0) b.Break(breaks);
      if (tag == GUMBO_TAG_BR) b.Text("\n", true);
      if (tag == GUMBO_TAG_PRE) ++pre_depth;
      if (tag == GUMBO_TAG_LI) b.Prefix("- ");
      if (const int level = HeadingLevel(tag)) b.Prefix(std::string(level, '#') + " ");
      if (tag == GUMBO_TAG_TD || tag == GUMBO_TAG_TH) b.Separator('\t');
      const GumboVector& kids =
          n->type == GUMBO_NODE_DOCUMENT ? n->v.document.children : n->v.element.children;
      for (unsigned i = kids.length; i > 0; --i) {
        stack.push_back({static_cast<const GumboNode*>(kids.data[i - 1]), false});
      }
      continue;
    }
    if (tag == GUMBO_TAG_PRE) --pre_depth;
    const int breaks = BreakAround(tag);
    if (breaks > 0) b.Break(breaks);
    stack.pop_back();
  }
  result.text = b.Take();
  return result;
}

}  // namespace ragd::corpus::internal
