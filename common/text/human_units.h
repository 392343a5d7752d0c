// Figures written for people, as the seed pages write them: 262.6 kW,
// $171,819, 6,960,000,000, 1.54 x 10^20, 395M, 20 April 2019. Exact values
// stay in JSON; these are for tables, cards and web pages (the CLI and the
// web front share them so that both say the same thing).
#pragma once

#include <string>

namespace modelatlas {

// 6960000000 -> "6,960,000,000" (rounded to a whole number).
std::string WithThousands(double value);

// 8030261248 -> "8.03B", 395000000 -> "395M", 512 -> "512".
std::string HumanCount(double value);

// 262640.3 -> "262.6 kW"; 300 -> "300 W"; 2.5e6 -> "2.5 MW".
std::string HumanPower(double watts);

// 171818.642 -> "$171,819"; 2.5 -> "$2.50".
std::string HumanUsd(double usd);

// 1.5405e20 -> "1.54 × 10^20"; values under 1e6 as WithThousands.
std::string TimesTenTo(double value);

// (2019, 4, 20) -> "20 April 2019"; day 0 -> "April 2019"; month 0 -> "2019";
// year 0 -> "".
std::string HumanDate(int year, int month, int day);

}  // namespace modelatlas
