// DOCX, ODT, PPTX, EPUB, CSV and text encodings (fixtures written by
// tests/data/corpus/make_office.py).
#include <gtest/gtest.h>

#include "corpus/chunker.h"
#include "corpus/extract.h"
#include "tests/corpus/test_util.h"

namespace ragd::corpus {
namespace {

using testing::ReadFixture;

bool Contains(const std::string& haystack, std::string_view needle) {
  return haystack.find(needle) != std::string::npos;
}

// One token per whitespace-separated word.
int CountWords(std::string_view s) {
  int n = 0;
  bool in_word = false;
  for (char c : s) {
    const bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
    if (!space && !in_word) ++n;
    in_word = !space;
  }
  return n;
}

// The heading context the chunker gives the chunk holding `needle`.
std::string HeadingOf(const std::string& text, std::string_view needle) {
  auto chunks = ChunkText(text, CountWords, {.target_tokens = 12, .overlap_tokens = 0});
  EXPECT_TRUE(chunks.ok());
  for (const TextChunk& c : *chunks) {
    if (Contains(c.text, needle)) return c.heading_context;
  }
  return "<not found>";
}

struct FormatCase {
  const char* fixture;
  std::string_view media_type;
  const char* title;
  std::vector<const char*> in_order;  // lines (or parts) the text holds, in this order
  std::vector<const char*> absent;    // what must not be extracted
  const char* passage;                // a passage and the heading chain above it
  const char* heading_context;
};

class DocumentFormat : public ::testing::TestWithParam<FormatCase> {};

TEST_P(DocumentFormat, TextHeadingsAndTitle) {
  const FormatCase& c = GetParam();
  auto doc = Extract(ReadFixture(c.fixture), c.fixture);
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  EXPECT_EQ(doc->media_type, c.media_type);
  EXPECT_EQ(doc->title, c.title);
  size_t at = 0;
  for (const char* part : c.in_order) {
    const size_t found = doc->text.find(part, at);
    ASSERT_NE(found, std::string::npos) << "'" << part << "' missing or out of order in:\n" << doc->text;
    at = found + std::string_view(part).size();
  }
  for (const char* part : c.absent) EXPECT_FALSE(Contains(doc->text, part)) << part << " in:\n" << doc->text;
  EXPECT_EQ(HeadingOf(doc->text, c.passage), c.heading_context) << doc->text;
  // Found by content alone, whatever the name says.
  auto unnamed = Extract(ReadFixture(c.fixture), "upload.bin");
  ASSERT_TRUE(unnamed.ok()) << unnamed.status().ToString();
  EXPECT_EQ(unnamed->text, doc->text);
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, DocumentFormat,
    ::testing::Values(
        FormatCase{
            "sample.docx",
            kMediaDocx,
            "Beacon Handbook",
            {"# Lighthouse Beacons\n\n# Coastal Signals\n\nThe quillon frequency of the Marlowe beacon",
             "Left\tRight", "## Maintenance\n\nClean the lens monthly.", "## Outline Heading",
             "Beacon\tFrequency\nMarlowe\t7719 hertz\nKestrel\t4411 hertz\n\nAfter the table."},
            {"REMOVED REVISION", "FIELDCODE"},
            "Clean the lens",
            "Coastal Signals > Maintenance"},
        FormatCase{"sample.odt",
                   kMediaOdt,
                   "Orchard Notes",
                   {"# Orchard Guide\n\nApples ripen in late autumn.   Pears earlier.", "## Pruning",
                    "- Cut dead wood\n\n- Open the centre", "Tree\tMonth\nApple\tMarch",
                    "Line one\nLine two\ttabbed"},
                   {"Figure"},
                   "Cut dead wood",
                   "Orchard Guide > Pruning"},
        FormatCase{"sample.pptx",
                   kMediaPptx,
                   "Review Deck",
                   {"# Quarterly Review\n\nOpening remarks\nAgenda for the day",
                    "# Results\n\nYield rose by a third.\n\nYear\tTons\n2023\t41"},
                   {},
                   "Yield rose",
                   "Results"},
        FormatCase{"sample.epub",
                   kMediaEpub,
                   "Tides of the North",
                   {"# Spring Tides\n\nThe moon pulls hardest at new moon.",
                    "# Neap Tides\n\nQuarter moons bring the smallest range."},
                   {},
                   "Quarter moons",
                   "Neap Tides"}),
    [](const auto& info) {
      std::string name = info.param.fixture;
      return name.substr(name.find('.') + 1);
    });

TEST(ExtractFormats, CsvRowsReadOnTheirOwn) {
  auto doc = Extract(ReadFixture("sample.csv"), "people.csv");
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  EXPECT_EQ(doc->media_type, kMediaCsv);
  EXPECT_EQ(doc->title, "people");
  EXPECT_EQ(doc->text,
            "name: Ada; city: London, UK; note: said \"hello\"\n"
            "name: Grace; city: Arlington; note: two lines\n"
            "name: Linus\n");
  // Declared types and separators: semicolons are guessed, TSV is told.
  EXPECT_EQ(Extract("a;b\n1;2\n", "x.csv")->text, "a: 1; b: 2\n");
  EXPECT_EQ(Extract("a\tb\n1\t2\n", "x.tsv")->text, "a: 1; b: 2\n");
  EXPECT_EQ(Extract("a,b\n1,2\n", "upload", "text/csv; charset=utf-8")->media_type, kMediaCsv);
  // A quote left open: kept as plain text rather than refused.
  auto open_quote = Extract("a,b\n\"1,2\n", "x.csv");
  ASSERT_TRUE(open_quote.ok());
  EXPECT_EQ(open_quote->media_type, kMediaPlainText);
}

class TextEncoding : public ::testing::TestWithParam<const char*> {};

TEST_P(TextEncoding, DecodedToUtf8) {
  auto doc = Extract(ReadFixture(GetParam()), GetParam());
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  EXPECT_EQ(doc->text, "Café naïve résumé — the “quoted” price is 5 €.\n");
}

INSTANTIATE_TEST_SUITE_P(Fixtures, TextEncoding,
                         ::testing::Values("utf16le.txt", "utf16be.txt", "cp1252.txt"), [](const auto& info) {
                           std::string name = info.param;
                           return name.substr(0, name.find('.'));
                         });

TEST(ExtractFormats, DeclaredCharsetIsHonoured) {
  auto latin = Extract("Gr\xFC\xDF Gott", "a.txt", "text/plain; charset=ISO-8859-1");
  ASSERT_TRUE(latin.ok());
  EXPECT_EQ(latin->text, "Grüß Gott");
  auto koi8 = Extract("\xF0\xD2\xC9\xD7\xC5\xD4", "a.txt", "text/plain; charset=\"KOI8-R\"");
  ASSERT_TRUE(koi8.ok());
  EXPECT_EQ(koi8->text, "Привет");
  // A few Windows-1252 letters in English text: read as Windows-1252, not repaired.
  auto few = Extract(std::string(300, 'a') + " caf\xE9", "a.txt");
  ASSERT_TRUE(few.ok());
  EXPECT_TRUE(Contains(few->text, "café"));
  // UTF-16 with NUL characters is still binary.
  EXPECT_EQ(Extract(std::string("\xFF\xFEh\0\0\0", 6), "a.txt").status().code(), StatusCode::kUnsupported);
}

TEST(ExtractFormats, RefusalsOfArchives) {
  auto sheet = Extract(ReadFixture("sheet.xlsx"), "sheet.xlsx");
  ASSERT_FALSE(sheet.ok());
  EXPECT_EQ(sheet.status().code(), StatusCode::kUnsupported);
  // Content decides: a spreadsheet renamed .docx is still refused, and says what it is.
  auto renamed = Extract(ReadFixture("sheet.xlsx"), "report.docx");
  ASSERT_FALSE(renamed.ok());
  EXPECT_EQ(renamed.status().code(), StatusCode::kUnsupported);
  EXPECT_TRUE(Contains(renamed.status().message(), "spreadsheet")) << renamed.status().message();
  // A name that promises DOCX on bytes that are not a ZIP.
  auto not_zip = Extract("plain words", "report.docx");
  ASSERT_FALSE(not_zip.ok());
  EXPECT_EQ(not_zip.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(not_zip.status().message(), "DOCX")) << not_zip.status().message();
  // A damaged archive.
  std::string cut = ReadFixture("sample.docx");
  cut.resize(cut.size() / 2);
  auto damaged = Extract(cut, "cut.docx");
  ASSERT_FALSE(damaged.ok());
  EXPECT_EQ(damaged.status().code(), StatusCode::kInvalidArgument) << damaged.status().ToString();
}

TEST(ExtractFormats, DecompressionBombIsStoppedAtTheLimit) {
  ExtractOptions small;
  small.max_unpacked_bytes = 1 << 20;
  auto doc = Extract(ReadFixture("bomb.docx"), "bomb.docx", "", small);
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().code(), StatusCode::kOutOfRange);
  EXPECT_TRUE(Contains(doc.status().message(), "unpacks")) << doc.status().message();
  EXPECT_TRUE(Extract(ReadFixture("bomb.docx"), "bomb.docx").ok());  // under the default limit
}

TEST(ExtractFormats, XmlEntitiesAreNeitherFetchedNorExpanded) {
  auto xxe = Extract(ReadFixture("xxe.docx"), "xxe.docx");
  ASSERT_TRUE(xxe.ok()) << xxe.status().ToString();
  EXPECT_EQ(xxe->text, "Safe text");
  // libxml2 refuses nested entities outright; were it to accept them, they must stay unexpanded.
  auto laughs = Extract(ReadFixture("laughs.docx"), "laughs.docx");
  if (laughs.ok()) {
    EXPECT_EQ(laughs->text, "Safe text");
  } else {
    EXPECT_EQ(laughs.status().code(), StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace ragd::corpus
