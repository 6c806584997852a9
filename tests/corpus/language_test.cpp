#include "corpus/language.h"

#include <gtest/gtest.h>

#include <string>

namespace ragd::corpus {
namespace {

TEST(TextSearchConfig, NamesTheLanguageOfRunningText) {
  EXPECT_STREQ(TextSearchConfig("The data folder holds the corpus and the index of all documents."),
               "english");
  EXPECT_STREQ(TextSearchConfig("A pasta de dados guarda os documentos e o índice para você."), "portuguese");
  EXPECT_STREQ(TextSearchConfig("Le dossier des données contient les documents et leur index."), "french");
  EXPECT_STREQ(TextSearchConfig("La carpeta de datos guarda los documentos y el índice del servidor."),
               "spanish");
  EXPECT_STREQ(TextSearchConfig("Der Datenordner enthält die Dokumente und den Index für den Server."),
               "german");
  EXPECT_STREQ(TextSearchConfig("DER ORDNER UND DIE DATEN"), "german");  // case does not matter
}

TEST(TextSearchConfig, FallsBackToSimpleWhenUnsure) {
  EXPECT_STREQ(TextSearchConfig(""), "simple");
  EXPECT_STREQ(TextSearchConfig("giraffe okapi"), "simple");
  EXPECT_STREQ(TextSearchConfig("the"), "simple");  // one word is not enough
  EXPECT_STREQ(TextSearchConfig("日本語 テキスト の 検索"), "simple");
  EXPECT_STREQ(TextSearchConfig(std::string("\xff\xfe the of \0 und", 15)), "english");
  EXPECT_EQ(std::string(TextSearchConfigs().back()), "simple");
  EXPECT_EQ(TextSearchConfigs().size(), 6u);
}

}  // namespace
}  // namespace ragd::corpus
