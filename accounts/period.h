// Quota periods and UTC time formatting. Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace ragd::accounts {

// A token budget renews at the start of each UTC calendar day or month.
enum class Period { kDay, kMonth };

// "day" / "month" (the config and API spelling).
std::string_view PeriodName(Period period);
// InvalidArgument for anything but "day" or "month".
Result<Period> ParsePeriod(std::string_view name);

// Start (inclusive) and end (exclusive) in Unix seconds of the period that
// contains `unix_s`.
int64_t PeriodStart(Period period, int64_t unix_s);
int64_t PeriodEnd(Period period, int64_t unix_s);

// "2026-11-29T18:04:05Z".
std::string FormatUtcTime(int64_t unix_s);
// "2026-11-29".
std::string FormatUtcDay(int64_t unix_s);

}  // namespace ragd::accounts
