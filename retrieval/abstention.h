// Whether a text says that the sources do not hold the answer, in the five
// languages of the answers: ragd's own abstention sentences ("The documents
// do not say.", "Os documentos não dizem.", ...) and a model's usual ways of
// saying it ("the documents do not mention", "ne précisent pas", "no
// especifican", "enthalten keine Informationen", ...). Attribution treats
// such a sentence as no claim (nothing to cite); `ragd eval` counts an answer
// holding one as an abstention.
//
// A sentence that only says where an answer is written ("These formats are
// listed in the \"Supported formats\" section of the document.", "Dies wird
// in der Quelle beschrieben.", "Esto se menciona en la fuente.") states no
// fact either: PointsAtSources tells it by a pointing opening ("This",
// "These", "C'est", "Esto", "Dies", ... or "The information"), a word for
// a part of the sources (source, section, table, fonte, Quelle, ...), a
// verb of saying or finding (stated, listed, mentioned, indiqué, menciona,
// beschrieben, ...) and no number or identifier of its own ("This is set by
// `server.port` in source [3]." names one and stays). Attribution drops it.
//
// Thread-safety: pure functions.
#pragma once

#include <string_view>

namespace ragd::retrieval {

bool SaysSourcesDoNotAnswer(std::string_view text);

// Whether `sentence` (markers removed) may still become one that only points
// at the sources, judged by its opening alone: what attribution holds back
// until the sentence ends.
bool MayPointAtSources(std::string_view sentence);

bool PointsAtSources(std::string_view sentence);

}  // namespace ragd::retrieval
