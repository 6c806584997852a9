#include "corpus/extract.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "common/text.h"
#include "tests/corpus/test_util.h"

namespace ragd::corpus {
namespace {

using testing::ReadFixture;

bool Contains(const std::string& haystack, std::string_view needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(Extract, PlainText) {
  auto doc = Extract(ReadFixture("sample.txt"), "sample.txt");
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  EXPECT_EQ(doc->media_type, kMediaPlainText);
  EXPECT_EQ(doc->title, "sample");
  EXPECT_EQ(doc->text, "Café notes\nSecond line\n");  // CRLF normalised
}

TEST(Extract, PlainTextTitleFallsBackToFirstLine) {
  auto doc = Extract("\xEF\xBB\xBF  Minutes of the meeting\nbody", "", "text/plain");
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(doc->title, "Minutes of the meeting");
  EXPECT_EQ(doc->text, "  Minutes of the meeting\nbody");  // BOM dropped
}

TEST(Extract, Markdown) {
  const std::string bytes = ReadFixture("sample.md");
  auto doc = Extract(bytes, "docs/sample.md");
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  EXPECT_EQ(doc->media_type, kMediaMarkdown);
  EXPECT_EQ(doc->title, "Garden Guide");
  EXPECT_EQ(doc->text, bytes);  // kept as written
  // Declared types: generic text/plain with a .md name is still Markdown.
  EXPECT_EQ(Extract(bytes, "notes.md", "text/plain")->media_type, kMediaMarkdown);
  EXPECT_EQ(Extract(bytes, "notes", "text/markdown; charset=utf-8")->media_type, kMediaMarkdown);
}

TEST(Extract, MarkdownWithoutHeadingUsesFileName) {
  auto doc = Extract("## Only a subheading\ntext\n```\n# fenced\n```\n", "release-notes.md");
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(doc->title, "release-notes");
}

TEST(Extract, HtmlVisibleTextOnly) {
  auto doc = Extract(ReadFixture("sample.html"), "page.html");
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  EXPECT_EQ(doc->media_type, kMediaHtml);
  EXPECT_EQ(doc->title, "Kitchen Notes");
  const std::string& t = doc->text;
  EXPECT_EQ(t,
            "# Bread Recipes\n\n"
            "Mix flour and water.\n\n"
            "Knead for ten minutes & rest.\n\n"
            "- Flour\n"
            "- Salt\n\n"
            "Line one\nLine two\n\n"
            "## Baking\n\n"
            "Oven\t220 C\n\n"
            "keep   this\n  spacing");
  for (std::string_view hidden :
       {"script text", "noscript", "hidden paragraph", "comment", "color", "nor this", "Kitchen"}) {
    EXPECT_FALSE(Contains(t, hidden)) << hidden;
  }
}

TEST(Extract, HtmlTitleFromH1AndSniffing) {
  const std::string html = "<!doctype html><body><h1>Main  <i>Topic</i></h1><p>Body text.</p></body>";
  auto doc = Extract(html, "");  // no name, no declared type: sniffed
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(doc->media_type, kMediaHtml);
  EXPECT_EQ(doc->title, "Main Topic");
  EXPECT_EQ(doc->text, "# Main Topic\n\nBody text.");
  auto declared = Extract("<p>x &lt; y</p>", "upload.bin", "text/html; charset=UTF-8");
  ASSERT_TRUE(declared.ok());
  EXPECT_EQ(declared->text, "x < y");
  EXPECT_EQ(declared->title, "upload");
}

TEST(Extract, HtmlNestingDepthIsBounded) {
  auto nested = [](int levels) {
    std::string html = "<html><body>";
    for (int i = 0; i < levels; ++i) html += "<div><span>";
    return html + "deep text";
  };
  auto doc = Extract(nested(400), "deep.html");
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  EXPECT_TRUE(Contains(doc->text, "deep text"));
  auto too_deep = Extract(nested(100000), "deeper.html");
  ASSERT_FALSE(too_deep.ok());
  EXPECT_EQ(too_deep.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(too_deep.status().message(), "nested"));
  // Thousands of paragraphs and list items without end tags are not "deep".
  std::string flat = "<html><body><ul>";
  for (int i = 0; i < 6000; ++i) flat += "<li>item<p>para<br><img src=x>";
  EXPECT_TRUE(Extract(flat, "flat.html").ok());
}

TEST(Extract, Pdf) {
  auto doc = Extract(ReadFixture("sample.pdf"), "handbook.pdf");
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  EXPECT_EQ(doc->media_type, kMediaPdf);
  EXPECT_EQ(doc->title, "Solar Handbook");
  const std::string& t = doc->text;
  EXPECT_TRUE(Contains(t, "Photovoltaic cells convert sunlight into electricity.")) << t;
  const size_t page1 = t.find("Solar Panels Overview");
  const size_t page2 = t.find("Maintenance");
  ASSERT_NE(page1, std::string::npos);
  ASSERT_NE(page2, std::string::npos);
  EXPECT_LT(page1, page2);
  // Pages joined by a form feed on a line of its own: a passage's page is
  // the number of form feeds before it, plus one.
  EXPECT_TRUE(Contains(t.substr(page1, page2 - page1), "\n\f\n")) << t;
  EXPECT_EQ(std::count(t.begin(), t.begin() + page1, '\f'), 0);
  EXPECT_EQ(std::count(t.begin(), t.begin() + page2, '\f'), 1);
  EXPECT_TRUE(Contains(t, "Clean the panels twice a year with soft water."));
  // Found by magic bytes even without a name or type.
  EXPECT_EQ(Extract(ReadFixture("sample.pdf"), "")->media_type, kMediaPdf);
}

TEST(Extract, RefusesBrokenPdf) {
  auto damaged = Extract("%PDF-1.4\nthis is not really a pdf\n", "x.pdf");
  ASSERT_FALSE(damaged.ok());
  EXPECT_EQ(damaged.status().code(), StatusCode::kInvalidArgument);
  auto not_pdf = Extract("plain words", "x.pdf");
  ASSERT_FALSE(not_pdf.ok());
  EXPECT_TRUE(Contains(not_pdf.status().message(), "PDF"));
  // Text that merely quotes the header is still text.
  auto quoting = Extract("A PDF file starts with %PDF-1.7 on its first line.", "notes.txt");
  ASSERT_TRUE(quoting.ok());
  EXPECT_EQ(quoting->media_type, kMediaPlainText);
}

TEST(Extract, RefusesBinary) {
  auto nul = Extract(std::string("abc\0def", 7), "a.txt");
  ASSERT_FALSE(nul.ok());
  EXPECT_EQ(nul.status().code(), StatusCode::kUnsupported);
  EXPECT_TRUE(Contains(nul.status().message(), "binary"));
  std::string controls = "text";
  for (int i = 0; i < 20; ++i) controls += "\x01\x02\x1b text ";
  auto ctl = Extract(controls, "a.log");
  ASSERT_FALSE(ctl.ok());
  EXPECT_TRUE(Contains(ctl.status().message(), "binary"));
  auto png = Extract(std::string("\x89PNG\r\n\x1a\n", 8) + "rest", "photo.dat");
  ASSERT_FALSE(png.ok());
  EXPECT_EQ(png.status().code(), StatusCode::kUnsupported);
  EXPECT_TRUE(Contains(png.status().message(), "PNG"));
}

TEST(Extract, RefusesUnsupportedFormats) {
  auto xlsx = Extract("looks like text", "report.xlsx");
  ASSERT_FALSE(xlsx.ok());
  EXPECT_EQ(xlsx.status().code(), StatusCode::kUnsupported);
  EXPECT_TRUE(Contains(xlsx.status().message(), ".xlsx"));
  auto zip = Extract(std::string("PK\x03\x04", 4) + "zipped", "report.txt");
  ASSERT_FALSE(zip.ok());
  EXPECT_TRUE(Contains(zip.status().message(), "ZIP"));
  auto image = Extract("whatever", "x", "image/png");
  ASSERT_FALSE(image.ok());
  EXPECT_EQ(image.status().code(), StatusCode::kUnsupported);
  EXPECT_TRUE(Contains(image.status().message(), "image/png"));
}

TEST(Extract, RefusesEmpty) {
  for (const std::string& bytes :
       {std::string(), std::string(" \n\t \r\n"),
        std::string("<html><head><title>T</title></head><body> <script>x</script></body>")}) {
    auto doc = Extract(bytes, bytes.find('<') == std::string::npos ? "a.txt" : "a.html");
    ASSERT_FALSE(doc.ok());
    EXPECT_EQ(doc.status().code(), StatusCode::kInvalidArgument);
    EXPECT_TRUE(Contains(doc.status().message(), "empty"));
  }
}

TEST(Extract, RefusesOversize) {
  ExtractOptions options;
  options.max_bytes = 10;
  EXPECT_TRUE(Extract("0123456789", "a.txt", "", options).ok());
  auto big = Extract("0123456789A", "a.txt", "", options);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), StatusCode::kOutOfRange);
  EXPECT_TRUE(Contains(big.status().message(), "limit"));
}

TEST(Extract, RepairsAFewBadBytesRefusesMostlyInvalid) {
  std::string mostly_good = "caf\xC3\xA9 " + std::string(2000, 'a');  // UTF-8, so not Windows-1252
  mostly_good[100] = '\xC3';                                          // truncated sequence
  mostly_good[900] = '\xFF';
  auto repaired = Extract(mostly_good, "a.txt");
  ASSERT_TRUE(repaired.ok()) << repaired.status().ToString();
  EXPECT_EQ(repaired->text.size(), 2006u + 4u);  // two bytes became two U+FFFD (3 bytes each)
  EXPECT_TRUE(Contains(repaired->text, "\xEF\xBF\xBD"));

  // Mostly invalid, with valid UTF-8 too (so not Windows-1252 text): refused.
  std::string mixed = "d\xC3\xA9j\xC3\xA0 ";
  for (int i = 0; i < 50; ++i) mixed += "caf\xE9 cr\xE8me ";
  auto refused = Extract(mixed, "menu.txt");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(refused.status().message(), "UTF-8"));
  // Bytes that Windows-1252 leaves undefined are not read as it either.
  EXPECT_FALSE(Extract("\x81\x8D\x8F\x90\x9D\x81\x8D", "a.txt").ok());
}

TEST(Extract, OtherTextTypesReadAsPlainText) {
  auto yaml = Extract("a: b\n", "table.yaml", "application/yaml");
  ASSERT_TRUE(yaml.ok()) << yaml.status().ToString();
  EXPECT_EQ(yaml->media_type, kMediaPlainText);
  auto json = Extract("{\"k\": 1}", "data", "application/json");
  ASSERT_TRUE(json.ok());
  EXPECT_EQ(json->media_type, kMediaPlainText);
  EXPECT_EQ(Extract("x", "a.xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")
                .status()
                .code(),
            StatusCode::kUnsupported);
}

TEST(Extract, LongTitlesAreCut) {
  std::string title;
  for (int i = 0; i < 100; ++i) title += "é";  // 2 bytes each
  auto doc = Extract("<title>x" + title + "</title><p>body</p>", "t.html");
  ASSERT_TRUE(doc.ok());
  EXPECT_LE(doc->title.size(), 200u);
  EXPECT_GE(doc->title.size(), 199u);
  EXPECT_TRUE(IsValidUtf8(doc->title));
}

// Found by the extract_html fuzz target: HTML with stray non-UTF-8 bytes,
// declared UTF-8, came out as invalid UTF-8 text.
TEST(Extract, HtmlWithStrayBytesGivesValidUtf8) {
  auto doc = Extract(testing::ReadFixture("fuzz/html-invalid-utf8-output.html"), "page.html",
                     "text/html; charset=utf-8");
  if (!doc.ok()) {
    EXPECT_FALSE(doc.status().message().empty());
    return;
  }
  EXPECT_TRUE(IsValidUtf8(doc->text));
  EXPECT_TRUE(IsValidUtf8(doc->title));
}

TEST(Extract, UnknownExtensionWithTextIsPlainText) {
  auto doc = Extract("key = value\n", "settings.properties");
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(doc->media_type, kMediaPlainText);
  EXPECT_EQ(doc->title, "settings");
}

}  // namespace
}  // namespace ragd::corpus
