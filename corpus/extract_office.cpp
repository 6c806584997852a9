// Text of the ZIP + XML document formats through libzip (zip_archive.h) and
// libxml2: DOCX (WordprocessingML), ODT (OpenDocument text), PPTX
// (PresentationML) and EPUB (XHTML chapters, read by ExtractHtml).
//
// What each keeps, as the chunker wants it: paragraphs separated by blank
// lines; headings as "#" lines of their level (DOCX: the paragraph's outline
// level, or its style's, or a "heading N"/"Title" style; ODT: text:h and its
// outline level; PPTX: each slide's title, "# Slide N" when it has none;
// EPUB: the chapters' h1-h6); table rows as one line of tab-separated cells;
// list items as "- " lines (ODT). Deleted revisions, field codes, comments
// and notes are left out.
//
// XML is parsed without network access or entity substitution (no external
// entity can be fetched, no entity expansion can grow), within libxml2's
// default limits on depth and text size.
#include <libxml/parser.h>
#include <libxml/tree.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "common/text.h"
#include "corpus/extract_formats.h"
#include "corpus/zip_archive.h"

namespace ragd::corpus::internal {
namespace {

// --- XML helpers -------------------------------------------------------------

using XmlDoc = std::unique_ptr<xmlDoc, void (*)(xmlDoc*)>;

Result<XmlDoc> ParseXml(const std::string& xml, std::string_view what) {
  static std::once_flag once;
  std::call_once(once, [] { xmlInitParser(); });
  xmlDoc* doc = xmlReadMemory(xml.data(), static_cast<int>(std::min<size_t>(xml.size(), INT32_MAX)), nullptr,
                              nullptr, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
  if (doc == nullptr || xmlDocGetRootElement(doc) == nullptr) {
    if (doc != nullptr) xmlFreeDoc(doc);
    return Status::InvalidArgument("unreadable document: " + std::string(what) + " is not well-formed XML");
  }
  return XmlDoc(doc, xmlFreeDoc);
}

bool IsElement(const xmlNode* n, const char* local) {
  return n != nullptr && n->type == XML_ELEMENT_NODE &&
         std::strcmp(reinterpret_cast<const char*>(n->name), local) == 0;
}

// The value of the attribute named `local`, "" when absent. Any namespace,
// unless `namespaced`: then only one in a namespace (r:id beside id).
std::string Attr(const xmlNode* n, const char* local, bool namespaced = false) {
  for (const xmlAttr* a = n->properties; a != nullptr; a = a->next) {
    if (std::strcmp(reinterpret_cast<const char*>(a->name), local) != 0) continue;
    if (namespaced && a->ns == nullptr) continue;
    xmlChar* v = xmlNodeGetContent(reinterpret_cast<const xmlNode*>(a));
    std::string out = v != nullptr ? reinterpret_cast<const char*>(v) : "";
    xmlFree(v);
    return out;
  }
  return {};
}

const xmlNode* Child(const xmlNode* n, const char* local) {
  for (const xmlNode* c = n != nullptr ? n->children : nullptr; c != nullptr; c = c->next) {
    if (IsElement(c, local)) return c;
  }
  return nullptr;
}

// First element named `local` at or below `n`, depth first.
const xmlNode* Find(const xmlNode* n, const char* local) {
  if (n == nullptr) return nullptr;
  if (IsElement(n, local)) return n;
  for (const xmlNode* c = n->children; c != nullptr; c = c->next) {
    if (const xmlNode* f = Find(c, local)) return f;
  }
  return nullptr;
}

// The text below `n`. Entity references are skipped, not expanded: a
// document's own entities (the "billion laughs") never grow its text.
std::string Content(const xmlNode* n) {
  std::string out;
  for (const xmlNode* c = n != nullptr ? n->children : nullptr; c != nullptr; c = c->next) {
    if (c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE)
      out += reinterpret_cast<const char*>(c->content);
    else if (c->type == XML_ELEMENT_NODE)
      out += Content(c);
  }
  return out;
}

std::string CollapseSpaces(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  return std::string(Trim(out));
}

// The Dublin Core title of a metadata document (docProps/core.xml, meta.xml, the EPUB package).
std::string DublinCoreTitle(const xmlDoc* doc) {
  return CollapseSpaces(Content(Find(xmlDocGetRootElement(doc), "title")));
}

// --- output ------------------------------------------------------------------

// Paragraphs, headings and table rows in the layout the chunker reads.
class Blocks {
 public:
  void Paragraph(std::string_view text) {
    text = Trim(text);
    if (text.empty()) return;
    Separate(2);
    out_ += text;
  }
  void Heading(int level, std::string_view text) {
    const std::string t = CollapseSpaces(text);
    if (t.empty()) return;
    Separate(2);
    out_ += std::string(static_cast<size_t>(std::clamp(level, 1, 6)), '#') + " " + t;
    if (first_heading_.empty()) first_heading_ = t;
  }
  void Row(const std::vector<std::string>& cells) {
    std::string line;
    for (size_t i = 0; i < cells.size(); ++i) line += (i > 0 ? "\t" : "") + CollapseSpaces(cells[i]);
    if (Trim(line).empty()) return;
    Separate(last_was_row_ ? 1 : 2);
    out_ += line;
    last_was_row_ = true;
  }
  void EndTable() { last_was_row_ = false; }
  std::string Take() { return std::move(out_); }
  const std::string& first_heading() const { return first_heading_; }

 private:
  void Separate(int newlines) {
    if (!out_.empty()) out_ += std::string(static_cast<size_t>(newlines), '\n');
    last_was_row_ = false;
  }
  std::string out_;
  std::string first_heading_;
  bool last_was_row_ = false;
};

// Reads entries of one archive against one budget for all of them.
class Unpacker {
 public:
  Unpacker(const ZipArchive& zip, size_t budget) : zip_(zip), budget_(budget) {}
  Result<std::string> Read(std::string_view name) {
    auto data = zip_.Read(name, budget_);
    if (data.ok()) {
      budget_ -= data->size();
    } else if (data.status().code() == StatusCode::kOutOfRange) {
      return Status::OutOfRange("the document unpacks to more than the limit of " + std::to_string(limit_) +
                                " bytes");
    }
    return data;
  }
  Result<XmlDoc> ReadXml(std::string_view name) {
    auto data = Read(name);
    if (!data.ok()) return data.status();
    return ParseXml(*data, name);
  }
  // The title in a Dublin Core metadata entry, "" when it is missing or unreadable.
  std::string TitleFrom(std::string_view name) {
    if (!zip_.Has(name)) return {};
    auto doc = ReadXml(name);
    return doc.ok() ? DublinCoreTitle(doc->get()) : std::string();
  }

 private:
  const ZipArchive& zip_;
  size_t budget_;
  const size_t limit_ = budget_;
};

// --- DOCX --------------------------------------------------------------------

// Style id -> heading level (0: not a heading), from word/styles.xml.
std::map<std::string, int> DocxHeadingStyles(const xmlDoc* styles) {
  std::map<std::string, int> levels;
  if (styles == nullptr) return levels;
  for (const xmlNode* s = xmlDocGetRootElement(styles)->children; s != nullptr; s = s->next) {
    if (!IsElement(s, "style")) continue;
    const std::string id = Attr(s, "styleId");
    const xmlNode* name_node = Child(s, "name");
    const std::string name = name_node != nullptr ? AsciiLower(Attr(name_node, "val")) : "";
    int level = 0;
    if (const xmlNode* outline = Find(Child(s, "pPr"), "outlineLvl")) {
      level = std::atoi(Attr(outline, "val").c_str()) + 1;
    } else if (name.starts_with("heading ") && name.size() == 9 && name[8] >= '1' && name[8] <= '9') {
      level = name[8] - '0';
    } else if (name == "title") {
      level = 1;
    }
    if (!id.empty() && level > 0 && level <= 9) levels[id] = level;
  }
  return levels;
}

int DocxHeadingLevel(const xmlNode* p, const std::map<std::string, int>& styles) {
  const xmlNode* ppr = Child(p, "pPr");
  if (const xmlNode* outline = Child(ppr, "outlineLvl")) {
    const int level = std::atoi(Attr(outline, "val").c_str()) + 1;
    return level <= 9 ? level : 0;  // 9: "body text"
  }
  const xmlNode* style_node = Child(ppr, "pStyle");
  const std::string style = style_node != nullptr ? Attr(style_node, "val") : "";
  if (style.empty()) return 0;
  if (auto it = styles.find(style); it != styles.end()) return it->second;
  // Without styles.xml: the English built-in ids.
  if (style.starts_with("Heading") && style.size() == 8 && style[7] >= '1' && style[7] <= '9')
    return style[7] - '0';
  return style == "Title" ? 1 : 0;
}

// The text of a paragraph's runs: w:t, w:tab, w:br; not deleted text or field codes.
void DocxRunText(const xmlNode* n, std::string* out) {
  for (const xmlNode* c = n->children; c != nullptr; c = c->next) {
    if (c->type != XML_ELEMENT_NODE) continue;
    if (IsElement(c, "t")) {
      *out += Content(c);
    } else if (IsElement(c, "tab")) {
      *out += '\t';
    } else if (IsElement(c, "br") || IsElement(c, "cr")) {
      *out += '\n';
    } else if (IsElement(c, "p")) {  // a text box's paragraph inside this one
      *out += '\n';
      DocxRunText(c, out);
    } else if (!IsElement(c, "delText") && !IsElement(c, "instrText") && !IsElement(c, "pPr") &&
               !IsElement(c, "rPr") && !IsElement(c, "del")) {
      DocxRunText(c, out);
    }
  }
}

std::string DocxCellText(const xmlNode* tc) {
  std::string text;
  for (const xmlNode* c = tc->children; c != nullptr; c = c->next) {
    if (!IsElement(c, "p")) continue;
    std::string para;
    DocxRunText(c, &para);
    if (!text.empty() && !para.empty()) text += ' ';
    text += para;
  }
  return text;
}

void DocxBlocks(const xmlNode* n, const std::map<std::string, int>& styles, Blocks* out) {
  for (const xmlNode* c = n->children; c != nullptr; c = c->next) {
    if (c->type != XML_ELEMENT_NODE) continue;
    if (IsElement(c, "p")) {
      std::string text;
      DocxRunText(c, &text);
      if (const int level = DocxHeadingLevel(c, styles))
        out->Heading(level, text);
      else
        out->Paragraph(text);
    } else if (IsElement(c, "tbl")) {
      for (const xmlNode* tr = c->children; tr != nullptr; tr = tr->next) {
        if (!IsElement(tr, "tr")) continue;
        std::vector<std::string> cells;
        for (const xmlNode* tc = tr->children; tc != nullptr; tc = tc->next) {
          if (IsElement(tc, "tc")) cells.push_back(DocxCellText(tc));
        }
        out->Row(cells);
      }
      out->EndTable();
    } else if (!IsElement(c, "sectPr") && !IsElement(c, "del")) {
      DocxBlocks(c, styles, out);  // w:body, w:sdt, w:sdtContent, w:customXml, w:ins ...
    }
  }
}

Result<FormatText> ExtractDocx(Unpacker& files) {
  auto document = files.ReadXml("word/document.xml");
  if (!document.ok()) return document.status();
  XmlDoc styles(nullptr, xmlFreeDoc);
  if (auto s = files.ReadXml("word/styles.xml"); s.ok()) styles = std::move(s).value();
  Blocks out;
  DocxBlocks(xmlDocGetRootElement(document->get()), DocxHeadingStyles(styles.get()), &out);
  FormatText result;
  result.title = files.TitleFrom("docProps/core.xml");
  if (result.title.empty()) result.title = out.first_heading();
  result.text = out.Take();
  return result;
}

// --- ODT ---------------------------------------------------------------------

void OdtInline(const xmlNode* n, std::string* out) {
  for (const xmlNode* c = n->children; c != nullptr; c = c->next) {
    if (c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE) {
      *out += reinterpret_cast<const char*>(c->content);
    } else if (IsElement(c, "s")) {
      const int count = std::max(1, std::atoi(Attr(c, "c").c_str()));
      *out += std::string(static_cast<size_t>(std::min(count, 64)), ' ');
    } else if (IsElement(c, "tab")) {
      *out += '\t';
    } else if (IsElement(c, "line-break")) {
      *out += '\n';
    } else if (c->type == XML_ELEMENT_NODE && !IsElement(c, "note") && !IsElement(c, "annotation") &&
               !IsElement(c, "tracked-changes")) {
      OdtInline(c, out);
    }
  }
}

std::string OdtCellText(const xmlNode* cell) {
  std::string text;
  for (const xmlNode* c = cell->children; c != nullptr; c = c->next) {
    if (!IsElement(c, "p") && !IsElement(c, "h")) continue;
    std::string para;
    OdtInline(c, &para);
    if (!text.empty() && !para.empty()) text += ' ';
    text += para;
  }
  return text;
}

void OdtBlocks(const xmlNode* n, Blocks* out, bool in_list) {
  for (const xmlNode* c = n->children; c != nullptr; c = c->next) {
    if (c->type != XML_ELEMENT_NODE) continue;
    if (IsElement(c, "h")) {
      std::string text;
      OdtInline(c, &text);
      const std::string level = Attr(c, "outline-level");
      out->Heading(level.empty() ? 1 : std::atoi(level.c_str()), text);
    } else if (IsElement(c, "p")) {
      std::string text;
      OdtInline(c, &text);
      out->Paragraph(in_list && !Trim(text).empty() ? "- " + text : text);
    } else if (IsElement(c, "table-row")) {
      std::vector<std::string> cells;
      for (const xmlNode* cell = c->children; cell != nullptr; cell = cell->next) {
        if (IsElement(cell, "table-cell")) cells.push_back(OdtCellText(cell));
      }
      out->Row(cells);
    } else if (IsElement(c, "table")) {
      OdtBlocks(c, out, false);
      out->EndTable();
    } else if (IsElement(c, "list-item") || IsElement(c, "list")) {
      OdtBlocks(c, out, true);
    } else if (!IsElement(c, "tracked-changes") && !IsElement(c, "annotation") &&
               !IsElement(c, "sequence-decls") && !IsElement(c, "forms")) {
      OdtBlocks(c, out, in_list);  // office:body, office:text, text:section, table-rows ...
    }
  }
}

Result<FormatText> ExtractOdt(Unpacker& files) {
  auto content = files.ReadXml("content.xml");
  if (!content.ok()) return content.status();
  const xmlNode* text = Find(xmlDocGetRootElement(content->get()), "text");  // office:text
  Blocks out;
  if (text != nullptr) OdtBlocks(text, &out, false);
  FormatText result;
  result.title = files.TitleFrom("meta.xml");
  if (result.title.empty()) result.title = out.first_heading();
  result.text = out.Take();
  return result;
}

// --- PPTX --------------------------------------------------------------------

// "a/b/../c" -> "a/c"; a leading "/" names the archive root.
std::string NormalizePath(std::string_view path) {
  std::vector<std::string> parts;
  for (size_t start = 0; start <= path.size();) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view part = path.substr(start, end - start);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.emplace_back(part);
    }
    start = end + 1;
  }
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : "/") + p;
  return out;
}

std::string PercentDecode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// Slide files in presentation order: p:sldIdLst through the relationships,
// else the slideN.xml entries in number order.
std::vector<std::string> PptxSlides(const ZipArchive& zip, Unpacker& files) {
  std::vector<std::string> slides;
  auto presentation = files.ReadXml("ppt/presentation.xml");
  auto rels = files.ReadXml("ppt/_rels/presentation.xml.rels");
  if (presentation.ok() && rels.ok()) {
    std::map<std::string, std::string> targets;
    for (const xmlNode* r = xmlDocGetRootElement(rels->get())->children; r != nullptr; r = r->next) {
      if (IsElement(r, "Relationship")) targets[Attr(r, "Id")] = Attr(r, "Target");
    }
    if (const xmlNode* list = Find(xmlDocGetRootElement(presentation->get()), "sldIdLst")) {
      for (const xmlNode* s = list->children; s != nullptr; s = s->next) {
        if (!IsElement(s, "sldId")) continue;
        auto it = targets.find(Attr(s, "id", /*namespaced=*/true));  // r:id, not id
        if (it == targets.end()) continue;
        const std::string path =
            NormalizePath(it->second.starts_with("/") ? it->second : "ppt/" + it->second);
        if (zip.Has(path)) slides.push_back(path);
      }
    }
  }
  if (!slides.empty()) return slides;
  std::vector<std::pair<int, std::string>> numbered;
  for (const std::string& name : zip.names()) {
    if (name.starts_with("ppt/slides/slide") && name.ends_with(".xml"))
      numbered.emplace_back(std::atoi(name.c_str() + 16), name);
  }
  std::sort(numbered.begin(), numbered.end());
  for (auto& [n, name] : numbered) slides.push_back(std::move(name));
  return slides;
}

// Paragraphs (a:p) of a text body, one line each.
std::string DrawingText(const xmlNode* n) {
  std::string out;
  for (const xmlNode* c = n->children; c != nullptr; c = c->next) {
    if (c->type != XML_ELEMENT_NODE) continue;
    if (IsElement(c, "p")) {
      std::string line;
      for (const xmlNode* r = c->children; r != nullptr; r = r->next) {
        if (IsElement(r, "br")) line += '\n';
        if (const xmlNode* t = Child(r, "t"); (IsElement(r, "r") || IsElement(r, "fld")) && t != nullptr)
          line += Content(t);
      }
      if (!Trim(line).empty()) out += (out.empty() ? "" : "\n") + line;
    } else {
      const std::string inner = DrawingText(c);
      if (!inner.empty()) out += (out.empty() ? "" : "\n") + inner;
    }
  }
  return out;
}

bool IsTitleShape(const xmlNode* sp) {
  const xmlNode* ph = Find(Child(sp, "nvSpPr"), "ph");
  if (ph == nullptr) return false;
  const std::string type = Attr(ph, "type");
  return type == "title" || type == "ctrTitle";
}

// Shapes of a slide's tree in document order: titles, text bodies, tables.
void PptxShapes(const xmlNode* n, std::string* title, Blocks* body) {
  for (const xmlNode* c = n->children; c != nullptr; c = c->next) {
    if (c->type != XML_ELEMENT_NODE) continue;
    if (IsElement(c, "sp")) {
      const xmlNode* tx = Child(c, "txBody");
      if (tx == nullptr) continue;
      if (IsTitleShape(c) && title->empty())
        *title = DrawingText(tx);
      else
        body->Paragraph(DrawingText(tx));
    } else if (IsElement(c, "tbl")) {
      for (const xmlNode* tr = c->children; tr != nullptr; tr = tr->next) {
        if (!IsElement(tr, "tr")) continue;
        std::vector<std::string> cells;
        for (const xmlNode* tc = tr->children; tc != nullptr; tc = tc->next) {
          if (IsElement(tc, "tc")) cells.push_back(DrawingText(tc));
        }
        body->Row(cells);
      }
      body->EndTable();
    } else {
      PptxShapes(c, title, body);  // p:grpSp, p:graphicFrame, a:graphic ...
    }
  }
}

Result<FormatText> ExtractPptx(const ZipArchive& zip, Unpacker& files) {
  Blocks out;
  const std::vector<std::string> slides = PptxSlides(zip, files);
  for (size_t i = 0; i < slides.size(); ++i) {
    auto slide = files.ReadXml(slides[i]);
    if (!slide.ok()) return slide.status();
    std::string title;
    Blocks body;
    if (const xmlNode* tree = Find(xmlDocGetRootElement(slide->get()), "spTree"))
      PptxShapes(tree, &title, &body);
    const std::string text = body.Take();
    if (Trim(title).empty() && Trim(text).empty()) continue;
    out.Heading(1, Trim(title).empty() ? "Slide " + std::to_string(i + 1) : title);
    out.Paragraph(text);
  }
  FormatText result;
  result.title = files.TitleFrom("docProps/core.xml");
  result.text = out.Take();
  return result;
}

// --- EPUB --------------------------------------------------------------------

Result<FormatText> ExtractEpub(Unpacker& files) {
  auto container = files.ReadXml("META-INF/container.xml");
  if (!container.ok()) return container.status();
  const xmlNode* rootfile = Find(xmlDocGetRootElement(container->get()), "rootfile");
  const std::string opf_path = rootfile != nullptr ? NormalizePath(Attr(rootfile, "full-path")) : "";
  if (opf_path.empty()) return Status::InvalidArgument("unreadable EPUB: no package document");
  auto opf = files.ReadXml(opf_path);
  if (!opf.ok()) return opf.status();
  const std::string base =
      opf_path.find('/') == std::string::npos ? "" : opf_path.substr(0, opf_path.rfind('/') + 1);
  const xmlNode* package = xmlDocGetRootElement(opf->get());
  std::map<std::string, std::string> manifest;  // id -> path in the archive
  if (const xmlNode* m = Child(package, "manifest")) {
    for (const xmlNode* item = m->children; item != nullptr; item = item->next) {
      if (IsElement(item, "item"))
        manifest[Attr(item, "id")] = NormalizePath(base + PercentDecode(Attr(item, "href")));
    }
  }
  FormatText result;
  result.title = CollapseSpaces(Content(Find(Child(package, "metadata"), "title")));
  const xmlNode* spine = Child(package, "spine");
  for (const xmlNode* ref = spine != nullptr ? spine->children : nullptr; ref != nullptr; ref = ref->next) {
    if (!IsElement(ref, "itemref")) continue;
    auto it = manifest.find(Attr(ref, "idref"));
    if (it == manifest.end()) continue;
    auto chapter = files.Read(it->second);
    if (!chapter.ok()) {
      if (chapter.status().code() == StatusCode::kNotFound) continue;
      return chapter.status();
    }
    // Chapters are XHTML; a chapter in another encoding than UTF-8 keeps its repaired bytes.
    auto html = ExtractHtml(IsValidUtf8(*chapter) ? *chapter : RepairUtf8(*chapter));
    if (!html.ok()) return html.status();
    if (Trim(html->text).empty()) continue;
    if (!result.text.empty()) result.text += "\n\n";
    result.text += html->text;
  }
  return result;
}

}  // namespace

std::string_view ZipFormatName(ZipFormat format) {
  switch (format) {
    case ZipFormat::kDocx:
      return "DOCX";
    case ZipFormat::kOdt:
      return "ODT";
    case ZipFormat::kPptx:
      return "PPTX";
    case ZipFormat::kEpub:
      return "EPUB";
    case ZipFormat::kUnknown:
      break;
  }
  return "ZIP";
}

Result<FormatText> ExtractZipDocument(std::string_view bytes, ZipFormat expected, size_t max_unpacked) {
  auto zip = ZipArchive::Open(bytes);
  if (!zip.ok()) {
    if (expected == ZipFormat::kUnknown)
      return Status::Unsupported("unsupported format: a ZIP archive, and a damaged one");
    return Status::InvalidArgument("not a " + std::string(ZipFormatName(expected)) +
                                   " document: " + zip.status().message());
  }
  Unpacker files(**zip, max_unpacked);
  // What the archive holds decides; a name or declared type only has to agree.
  ZipFormat found = ZipFormat::kUnknown;
  std::string mimetype;
  if ((*zip)->Has("mimetype")) {
    auto m = files.Read("mimetype");
    if (m.ok()) mimetype = std::string(Trim(*m));
  }
  if ((*zip)->Has("word/document.xml"))
    found = ZipFormat::kDocx;
  else if ((*zip)->Has("ppt/presentation.xml"))
    found = ZipFormat::kPptx;
  else if (mimetype == "application/vnd.oasis.opendocument.text" && (*zip)->Has("content.xml"))
    found = ZipFormat::kOdt;
  else if (mimetype == "application/epub+zip" && (*zip)->Has("META-INF/container.xml"))
    found = ZipFormat::kEpub;
  if (found == ZipFormat::kUnknown || (expected != ZipFormat::kUnknown && expected != found)) {
    std::string what = "a ZIP archive";
    if (mimetype.starts_with("application/vnd.oasis.opendocument."))
      what = "an OpenDocument file of type " + mimetype.substr(35);
    else if ((*zip)->Has("xl/workbook.xml"))
      what = "a spreadsheet (XLSX)";
    return Status::Unsupported("unsupported format: " + what +
                               " (supported: plain text, Markdown, HTML, PDF, CSV, DOCX, ODT, PPTX, EPUB)");
  }
  Result<FormatText> text = Status::Internal("unreachable");
  switch (found) {
    case ZipFormat::kDocx:
      text = ExtractDocx(files);
      if (text.ok()) text->media_type = kMediaDocx;
      break;
    case ZipFormat::kOdt:
      text = ExtractOdt(files);
      if (text.ok()) text->media_type = kMediaOdt;
      break;
    case ZipFormat::kPptx:
      text = ExtractPptx(**zip, files);
      if (text.ok()) text->media_type = kMediaPptx;
      break;
    case ZipFormat::kEpub:
      text = ExtractEpub(files);
      if (text.ok()) text->media_type = kMediaEpub;
      break;
    case ZipFormat::kUnknown:
      break;
  }
  return text;
}

}  // namespace ragd::corpus::internal
