#include "catalog-service/import/epoch_conventions.h"

#include <cmath>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace modelatlas::catalog {
namespace {

using common::v1::Hardware;

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = 1024.0 * kMiB;

// Whole numbers as the report shows them ("80000000000", not "8e+10").
std::string Figure(double value) { return absl::StrFormat("%.17g", value); }

void Add(int64_t row, const Hardware& hardware, const char* field, double file_value,
         double stored_value, std::string reason, std::vector<v1::ImportConversion>* out) {
  v1::ImportConversion* conversion = &out->emplace_back();
  conversion->set_row(row);
  conversion->set_display_name(hardware.display_name());
  conversion->set_field(field);
  conversion->set_file_value(Figure(file_value));
  conversion->set_stored_value(Figure(stored_value));
  conversion->set_reason(std::move(reason));
}

// One tensor peak of a GeForce card: Epoch's FP16-accumulate figure moves
// to its own field and the record's field gets the FP32-accumulate half.
void HalveAccumulatePeak(int64_t row, Hardware* hardware, bool fp8,
                         std::vector<v1::ImportConversion>* conversions) {
  auto* peak = hardware->mutable_peak();
  const bool present = fp8 ? peak->has_fp8_flops() : peak->has_tensor_fp16_bf16_flops();
  if (!present) return;
  const double quoted = fp8 ? peak->fp8_flops() : peak->tensor_fp16_bf16_flops();
  if (fp8) {
    peak->set_fp8_fp16_accumulate_flops(quoted);
    peak->set_fp8_flops(quoted / 2);
  } else {
    peak->set_tensor_fp16_fp16_accumulate_flops(quoted);
    peak->set_tensor_fp16_bf16_flops(quoted / 2);
  }
  Add(row, *hardware, fp8 ? "peak.fp8_flops" : "peak.tensor_fp16_bf16_flops", quoted, quoted / 2,
      absl::StrCat(
          "a GeForce card: Epoch's figure is the FP16-accumulate rate; the field holds "
          "the FP32-accumulate rate, half of it (the quoted figure is kept in ",
          fp8 ? "peak.fp8_fp16_accumulate_flops" : "peak.tensor_fp16_fp16_accumulate_flops", ")"),
      conversions);
}

// ---- Utilization stated in a model's training compute notes ----

// A note as a sequence of words, numbers and single punctuation marks.
struct Token {
  enum Kind { kWord, kNumber, kMark } kind;
  std::string text;  // the word, the number as written, or the mark
  size_t begin = 0;  // span in the note
  size_t end = 0;
  bool rate = false;    // a number that reads as a rate (see RateOf)
  double fraction = 0;  // its value as a fraction when `rate`
};

// "0.3" or "30%" as a fraction in (0, 1]; whole numbers without "%" are
// counts ("8 GPUs"), numbers with an exponent are figures ("3e23").
void ReadRate(absl::string_view text, size_t* end, Token* token) {
  size_t after = *end;
  if (after < text.size() && (text[after] == 'e' || text[after] == 'x')) return;
  while (after < text.size() && text[after] == ' ') ++after;
  const bool percent = after < text.size() && text[after] == '%';
  double value = 0;
  if (!absl::SimpleAtod(token->text, &value)) return;
  if (percent) {
    value /= 100;
    *end = after + 1;
  } else if (!absl::StrContains(token->text, '.')) {
    return;
  }
  if (!(value > 0 && value <= 1)) return;
  token->rate = true;
  token->fraction = value;
}

std::vector<Token> Tokenize(absl::string_view lower) {
  std::vector<Token> tokens;
  auto digit = [&](size_t i) {
    return i < lower.size() && absl::ascii_isdigit(static_cast<unsigned char>(lower[i]));
  };
  for (size_t i = 0; i < lower.size();) {
    const unsigned char c = static_cast<unsigned char>(lower[i]);
    if (absl::ascii_isspace(c)) {
      ++i;
    } else if (absl::ascii_isdigit(c) || (c == '.' && digit(i + 1))) {
      size_t end = i;
      while (digit(end) || (end < lower.size() && lower[end] == '.' && digit(end + 1))) ++end;
      Token token{Token::kNumber, std::string(lower.substr(i, end - i)), i, end};
      ReadRate(lower, &end, &token);
      token.end = end;
      tokens.push_back(std::move(token));
      i = end;
    } else if (absl::ascii_isalpha(c)) {
      size_t end = i;
      while (end < lower.size() && absl::ascii_isalpha(static_cast<unsigned char>(lower[end])))
        ++end;
      tokens.push_back({Token::kWord, std::string(lower.substr(i, end - i)), i, end});
      i = end;
    } else {
      tokens.push_back({Token::kMark, std::string(1, lower[i]), i, i + 1});
      ++i;
    }
  }
  return tokens;
}

bool IsWord(const std::vector<Token>& t, size_t i, std::initializer_list<absl::string_view> words) {
  if (i >= t.size() || t[i].kind != Token::kWord) return false;
  for (absl::string_view w : words) {
    if (t[i].text == w) return true;
  }
  return false;
}

bool IsMark(const std::vector<Token>& t, size_t i, std::initializer_list<char> marks) {
  if (i >= t.size() || t[i].kind != Token::kMark) return false;
  for (char m : marks) {
    if (t[i].text[0] == m) return true;
  }
  return false;
}

bool IsUtilizationWord(const std::vector<Token>& t, size_t i) {
  return IsWord(t, i, {"utilization", "utilisation", "util", "mfu", "hfu"});
}

// A rate that is not one end of a range ("38-43%", "0.3 to 0.4").
bool IsLoneRate(const std::vector<Token>& t, size_t i) {
  if (i >= t.size() || t[i].kind != Token::kNumber || !t[i].rate) return false;
  auto number = [&](size_t k) { return k < t.size() && t[k].kind == Token::kNumber; };
  if (i >= 2 && number(i - 2) &&
      (IsMark(t, i - 1, {'-', '/'}) || IsWord(t, i - 1, {"to", "and"}))) {
    return false;
  }
  return !(number(i + 2) && (IsMark(t, i + 1, {'-', '/'}) || IsWord(t, i + 1, {"to", "and"})));
}

// The rates tied to a utilization word in the note, with the note's words.
void PhraseRates(absl::string_view note, const std::vector<Token>& t,
                 std::vector<StatedUtilization>* found) {
  auto said = [&](size_t from, size_t to) {
    return std::string(note.substr(t[from].begin, t[to].end - t[from].begin));
  };
  for (size_t i = 0; i < t.size(); ++i) {
    // The number before the word: "0.3 [assumed utilization]", "40% MFU".
    if (IsLoneRate(t, i)) {
      size_t j = i + 1;
      if (IsMark(t, j, {'[', '('})) ++j;
      for (int fillers = 0;
           fillers < 2 &&
           IsWord(t, j, {"assumed", "reported", "actual", "gpu", "hardware", "model", "flops"});
           ++fillers) {
        ++j;
      }
      if (IsUtilizationWord(t, j)) {
        if (IsMark(t, j + 1, {']', ')'}) && IsMark(t, i + 1, {'[', '('})) ++j;
        found->push_back({t[i].fraction, said(i, j)});
        continue;
      }
    }
    // The number after the word: "utilization rate of 0.3", "MFU: 40%".
    if (IsUtilizationWord(t, i)) {
      size_t j = i + 1;
      if (IsWord(t, j, {"rate"})) ++j;
      if (IsMark(t, j, {':', '='}) || IsWord(t, j, {"of", "is", "at"})) ++j;
      if (IsLoneRate(t, j)) found->push_back({t[j].fraction, said(i, j)});
    }
  }
}

// Splits `product` on the "*" outside parentheses.
std::vector<absl::string_view> Factors(absl::string_view product) {
  std::vector<absl::string_view> factors;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < product.size(); ++i) {
    if (product[i] == '(') ++depth;
    if (product[i] == ')') --depth;
    if (product[i] == '*' && depth == 0) {
      factors.push_back(absl::StripAsciiWhitespace(product.substr(start, i - start)));
      start = i + 1;
    }
  }
  factors.push_back(absl::StripAsciiWhitespace(product.substr(start)));
  return factors;
}

// Epoch's template: a line of parenthesized labels joined by "*" whose last
// label is the utilization rate, labelling the product on the line before it
// ("flops = (8) * (312 * 10**12) * (24 * 3600) * (0.3)") or after its own
// "=" ("= (16) * ... * (0.56) = 7.2e21"). The product's last factor is the
// rate, as a plain number, alone or in parentheses.
void TemplateRates(absl::string_view lower, absl::string_view note,
                   std::vector<StatedUtilization>* found) {
  const std::vector<absl::string_view> lines = absl::StrSplit(lower, '\n');
  absl::string_view previous;
  for (absl::string_view line : lines) {
    const size_t label = line.find("utilization rate)");
    const size_t open = line.find("(num");
    if (label == absl::string_view::npos || open == absl::string_view::npos || open > label) {
      if (!absl::StripAsciiWhitespace(line).empty()) previous = line;
      continue;
    }
    // The labels end the product: nothing but "=" may follow the last one.
    absl::string_view rest = line.substr(label + std::string_view("utilization rate)").size());
    rest = absl::StripAsciiWhitespace(rest);
    absl::string_view product = previous;
    if (absl::ConsumePrefix(&rest, "=")) product = rest;
    // The product: after its first "=" when it has a name ("flops ="), up to
    // the result's "=".
    if (const size_t eq = product.find('='); eq != absl::string_view::npos) {
      absl::string_view head = absl::StripAsciiWhitespace(product.substr(0, eq));
      if (!head.empty() && absl::ascii_isalpha(static_cast<unsigned char>(head[0]))) {
        product = product.substr(eq + 1);
      }
    }
    product = product.substr(0, product.find('='));
    const std::vector<absl::string_view> factors = Factors(product);
    if (factors.size() < 2) continue;
    absl::string_view last = factors.back();
    if (absl::ConsumePrefix(&last, "(") && !absl::ConsumeSuffix(&last, ")")) continue;
    last = absl::StripAsciiWhitespace(last);
    double value = 0;
    if (!absl::StrContains(last, '.') || !absl::SimpleAtod(last, &value) || !(value > 0) ||
        value > 1) {
      continue;
    }
    const size_t at = static_cast<size_t>(last.data() - lower.data());
    found->push_back({value, absl::StrCat(note.substr(at, last.size()),
                                          " (the note's \"assumed utilization "
                                          "rate\" factor)")});
  }
}

}  // namespace

bool QuotesFp16AccumulatePeaks(const Hardware& hardware) {
  // Every GeForce card with tensor cores (RTX 20 series on) is marketed
  // this way (Turing, Ampere GA102, Ada and Blackwell GeForce whitepapers);
  // workstation (RTX A6000, RTX 6000 Ada, RTX PRO) and data-center cards
  // run FP32 accumulation at the full rate and quote that.
  return absl::StrContains(absl::AsciiStrToLower(hardware.display_name()), "geforce");
}

void ConvertEpochHardwareRow(int64_t row, Hardware* hardware,
                             std::vector<v1::ImportConversion>* conversions) {
  if (hardware->has_memory_bytes() && hardware->memory_bytes() > 0) {
    const double bytes = hardware->memory_bytes();
    if (std::fmod(bytes, kMiB) != 0) {
      if (std::fmod(bytes, 1e9) == 0 || std::fmod(bytes, 1e6) != 0) {
        const double gb = bytes / 1e9;
        hardware->set_memory_bytes(std::round(gb * kGiB));
        Add(row, *hardware, "memory_bytes", bytes, hardware->memory_bytes(),
            absl::StrCat("Epoch's ", absl::StrFormat("%g", gb),
                         " GB (decimal) read as the vendor's ", absl::StrFormat("%g", gb),
                         " GiB (memory chips come in powers of two)"),
            conversions);
      } else {
        const double mb = bytes / 1e6;
        hardware->set_memory_bytes(mb * kMiB);
        Add(row, *hardware, "memory_bytes", bytes, hardware->memory_bytes(),
            absl::StrCat("Epoch's ", absl::StrFormat("%g", mb), " MB (decimal) read as ",
                         absl::StrFormat("%g", mb), " MiB"),
            conversions);
      }
    }
  }
  if (QuotesFp16AccumulatePeaks(*hardware)) {
    HalveAccumulatePeak(row, hardware, /*fp8=*/false, conversions);
    HalveAccumulatePeak(row, hardware, /*fp8=*/true, conversions);
  }
}

bool EpochTensorPeak(const Hardware& hardware, bool fp8, double* value) {
  const auto& peak = hardware.peak();
  const bool has = fp8 ? peak.has_fp8_flops() : peak.has_tensor_fp16_bf16_flops();
  const bool has_quoted =
      fp8 ? peak.has_fp8_fp16_accumulate_flops() : peak.has_tensor_fp16_fp16_accumulate_flops();
  if (!QuotesFp16AccumulatePeaks(hardware)) {
    if (!has) return false;
    *value = fp8 ? peak.fp8_flops() : peak.tensor_fp16_bf16_flops();
    return true;
  }
  if (has_quoted) {
    *value = fp8 ? peak.fp8_fp16_accumulate_flops() : peak.tensor_fp16_fp16_accumulate_flops();
    return true;
  }
  if (!has) return false;
  *value = 2 * (fp8 ? peak.fp8_flops() : peak.tensor_fp16_bf16_flops());
  return true;
}

std::optional<StatedUtilization> AssumedUtilizationInNotes(absl::string_view notes) {
  const std::string lower = absl::AsciiStrToLower(notes);
  std::vector<StatedUtilization> found;
  TemplateRates(lower, notes, &found);
  PhraseRates(notes, Tokenize(lower), &found);
  if (found.empty()) return std::nullopt;
  for (const StatedUtilization& other : found) {
    if (std::fabs(other.fraction - found.front().fraction) > 1e-9) return std::nullopt;
  }
  return found.front();
}

void ConvertEpochModelRow(int64_t row, common::v1::Model* model,
                          std::vector<v1::ImportConversion>* conversions) {
  if (model->has_hardware_utilization_assumed()) return;
  std::optional<StatedUtilization> stated =
      AssumedUtilizationInNotes(model->training_compute_notes());
  if (!stated) return;
  model->set_hardware_utilization_assumed(stated->fraction);
  v1::ImportConversion* conversion = &conversions->emplace_back();
  conversion->set_row(row);
  conversion->set_display_name(model->display_name());
  conversion->set_field("hardware_utilization_assumed");
  conversion->set_file_value(stated->said);
  conversion->set_stored_value(absl::StrFormat("%.6g", stated->fraction));
  conversion->set_reason(
      "the utilization rate the training compute notes' estimate assumed, the one rate they "
      "state");
}

}  // namespace modelatlas::catalog
