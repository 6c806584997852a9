// Whether a text says that the sources do not hold the answer, in the five
// languages of the answers: ragd's own abstention sentences ("The documents
// do not say.", "Os documentos não dizem.", ...) and a model's usual ways of
// saying it ("the documents do not mention", "ne précisent pas", "no
// especifican", "enthalten keine Informationen", ...). Attribution treats
// such a sentence as no claim (nothing to cite); `ragd eval` counts an answer
// holding one as an abstention.
//
// Thread-safety: pure function.
#pragma once

#include <string_view>

namespace ragd::retrieval {

bool SaysSourcesDoNotAnswer(std::string_view text);

}  // namespace ragd::retrieval
