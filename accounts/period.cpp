#include "accounts/period.h"

#include <chrono>
#include <cstdio>

namespace ragd::accounts {
namespace {

using std::chrono::days;
using std::chrono::floor;
using std::chrono::seconds;
using std::chrono::sys_days;
using std::chrono::sys_seconds;
using std::chrono::year_month_day;

int64_t ToUnix(sys_days day) { return sys_seconds(day).time_since_epoch().count(); }

year_month_day DayOf(int64_t unix_s) { return year_month_day(floor<days>(sys_seconds(seconds(unix_s)))); }

}  // namespace

std::string_view PeriodName(Period period) { return period == Period::kMonth ? "month" : "day"; }

Result<Period> ParsePeriod(std::string_view name) {
  if (name == "day") return Period::kDay;
  if (name == "month") return Period::kMonth;
  return Status::InvalidArgument("quota period must be \"day\" or \"month\"");
}

int64_t PeriodStart(Period period, int64_t unix_s) {
  year_month_day ymd = DayOf(unix_s);
  if (period == Period::kDay) return ToUnix(sys_days(ymd));
  return ToUnix(sys_days(ymd.year() / ymd.month() / 1));
}

int64_t PeriodEnd(Period period, int64_t unix_s) {
  year_month_day ymd = DayOf(unix_s);
  if (period == Period::kDay) return ToUnix(sys_days(ymd) + days(1));
  return ToUnix(sys_days((ymd.year() / ymd.month() / 1) + std::chrono::months(1)));
}

std::string FormatUtcTime(int64_t unix_s) {
  year_month_day ymd = DayOf(unix_s);
  int64_t in_day = unix_s - ToUnix(sys_days(ymd));
  char text[32];
  std::snprintf(text, sizeof(text), "%04d-%02u-%02uT%02d:%02d:%02dZ", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                static_cast<int>(in_day / 3600), static_cast<int>(in_day / 60 % 60),
                static_cast<int>(in_day % 60));
  return text;
}

std::string FormatUtcDay(int64_t unix_s) { return FormatUtcTime(unix_s).substr(0, 10); }

}  // namespace ragd::accounts
