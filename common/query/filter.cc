#include "common/query/filter.h"

#include <cmath>
#include <map>
#include <optional>
#include <variant>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "common/query/fields.h"
#include "common/status/errors.h"
#include "common/status/suggest.h"
#include "google/protobuf/reflection.h"
#include "google/protobuf/timestamp.pb.h"
#include "google/type/date.pb.h"

namespace modelatlas::query {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

namespace {

enum class Op { kEq, kNe, kLt, kLe, kGt, kGe, kHas };

// What a leaf field holds, as far as filters and ordering are concerned.
enum class Kind { kNumber, kString, kEnum, kBool, kDate, kTimestamp };

using Path = std::vector<const FieldDescriptor*>;

bool IsDate(const FieldDescriptor* f) {
  return f->message_type() != nullptr && f->message_type()->full_name() == "google.type.Date";
}
bool IsTimestamp(const FieldDescriptor* f) {
  return f->message_type() != nullptr &&
         f->message_type()->full_name() == "google.protobuf.Timestamp";
}

std::optional<Kind> KindOf(const FieldDescriptor* f) {
  if (IsDate(f)) return Kind::kDate;
  if (IsTimestamp(f)) return Kind::kTimestamp;
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_DOUBLE:
    case FieldDescriptor::CPPTYPE_FLOAT:
    case FieldDescriptor::CPPTYPE_INT32:
    case FieldDescriptor::CPPTYPE_INT64:
    case FieldDescriptor::CPPTYPE_UINT32:
    case FieldDescriptor::CPPTYPE_UINT64:
      return Kind::kNumber;
    case FieldDescriptor::CPPTYPE_STRING:
      return Kind::kString;
    case FieldDescriptor::CPPTYPE_ENUM:
      return Kind::kEnum;
    case FieldDescriptor::CPPTYPE_BOOL:
      return Kind::kBool;
    default:
      return std::nullopt;
  }
}

// A scalar read from a record: numbers, enums, bools, dates and timestamps
// as double (dates as yyyymmdd, timestamps as Unix seconds), text as string.
using Scalar = std::variant<double, std::string>;

double NumberAt(const Message& m, const FieldDescriptor* f, int index) {
  const Reflection* r = m.GetReflection();
  const bool rep = f->is_repeated();
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return rep ? r->GetRepeatedDouble(m, f, index) : r->GetDouble(m, f);
    case FieldDescriptor::CPPTYPE_FLOAT:
      return rep ? r->GetRepeatedFloat(m, f, index) : r->GetFloat(m, f);
    case FieldDescriptor::CPPTYPE_INT32:
      return rep ? r->GetRepeatedInt32(m, f, index) : r->GetInt32(m, f);
    case FieldDescriptor::CPPTYPE_INT64:
      return static_cast<double>(rep ? r->GetRepeatedInt64(m, f, index) : r->GetInt64(m, f));
    case FieldDescriptor::CPPTYPE_UINT32:
      return rep ? r->GetRepeatedUInt32(m, f, index) : r->GetUInt32(m, f);
    case FieldDescriptor::CPPTYPE_UINT64:
      return static_cast<double>(rep ? r->GetRepeatedUInt64(m, f, index) : r->GetUInt64(m, f));
    case FieldDescriptor::CPPTYPE_ENUM:
      return rep ? r->GetRepeatedEnumValue(m, f, index) : r->GetEnumValue(m, f);
    case FieldDescriptor::CPPTYPE_BOOL:
      return (rep ? r->GetRepeatedBool(m, f, index) : r->GetBool(m, f)) ? 1 : 0;
    default:
      return 0;
  }
}

Scalar ScalarAt(const Message& m, const FieldDescriptor* f, int index) {
  const Reflection* r = m.GetReflection();
  if (IsDate(f)) {
    const auto& d = static_cast<const google::type::Date&>(r->GetMessage(m, f));
    return static_cast<double>(d.year() * 10000 + d.month() * 100 + d.day());
  }
  if (IsTimestamp(f)) {
    const auto& t = static_cast<const google::protobuf::Timestamp&>(r->GetMessage(m, f));
    return static_cast<double>(t.seconds()) + t.nanos() * 1e-9;
  }
  if (f->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
    return f->is_repeated() ? r->GetRepeatedString(m, f, index) : r->GetString(m, f);
  }
  return NumberAt(m, f, index);
}

// Whether a singular field counts as set: presence where the field tracks
// it, else a non-default value.
bool IsSet(const Message& m, const FieldDescriptor* f) {
  const Reflection* r = m.GetReflection();
  if (f->is_repeated()) return r->FieldSize(m, f) > 0;
  if (f->has_presence()) return r->HasField(m, f);
  if (f->cpp_type() == FieldDescriptor::CPPTYPE_STRING) return !r->GetString(m, f).empty();
  return NumberAt(m, f, 0) != 0;
}

// The values at `path` in `record`: none when unset, several for a repeated leaf.
std::vector<Scalar> ValuesAt(const Message& record, const Path& path) {
  const Message* m = &record;
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    if (!m->GetReflection()->HasField(*m, path[i])) return {};
    m = &m->GetReflection()->GetMessage(*m, path[i]);
  }
  const FieldDescriptor* leaf = path.back();
  std::vector<Scalar> values;
  if (leaf->is_repeated()) {
    const int n = m->GetReflection()->FieldSize(*m, leaf);
    for (int i = 0; i < n; ++i) values.push_back(ScalarAt(*m, leaf, i));
  } else if (!leaf->has_presence() || IsSet(*m, leaf)) {
    // Proto3 scalars without presence always have a value (their default).
    values.push_back(ScalarAt(*m, leaf, 0));
  }
  return values;
}

bool PresentAt(const Message& record, const Path& path) {
  const Message* m = &record;
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    if (!m->GetReflection()->HasField(*m, path[i])) return false;
    m = &m->GetReflection()->GetMessage(*m, path[i]);
  }
  return IsSet(*m, path.back());
}

// The first occurrence of `needle` in `haystack` at or after `from`, or npos:
// Knuth-Morris-Pratt, so time is linear in both (a naive search takes
// |haystack| x |needle| on "aaaa...b").
size_t FindLinear(absl::string_view haystack, absl::string_view needle, size_t from = 0) {
  if (needle.empty()) return from <= haystack.size() ? from : absl::string_view::npos;
  std::vector<size_t> fail(needle.size(), 0);
  for (size_t i = 1, k = 0; i < needle.size(); ++i) {
    while (k > 0 && needle[i] != needle[k]) k = fail[k - 1];
    if (needle[i] == needle[k]) ++k;
    fail[i] = k;
  }
  for (size_t i = from, k = 0; i < haystack.size(); ++i) {
    while (k > 0 && haystack[i] != needle[k]) k = fail[k - 1];
    if (haystack[i] == needle[k]) ++k;
    if (k == needle.size()) return i + 1 - needle.size();
  }
  return absl::string_view::npos;
}

// Simple glob: '*' matches any run of characters. The pattern is cut at its
// stars: the first piece must start the text, the last end it, and each
// piece between is taken at its first place after the one before (leftmost
// is never worse), so matching is linear in text and pattern.
bool GlobMatch(absl::string_view pattern, absl::string_view text) {
  std::vector<absl::string_view> pieces = absl::StrSplit(pattern, '*');
  if (pieces.size() == 1) return pattern == text;
  const absl::string_view first = pieces.front(), last = pieces.back();
  if (first.size() + last.size() > text.size() || !absl::StartsWith(text, first) ||
      !absl::EndsWith(text, last)) {
    return false;
  }
  // The middle pieces within what the first and last leave.
  const absl::string_view middle =
      text.substr(first.size(), text.size() - first.size() - last.size());
  size_t at = 0;
  for (size_t i = 1; i + 1 < pieces.size(); ++i) {
    at = FindLinear(middle, pieces[i], at);
    if (at == absl::string_view::npos) return false;
    at += pieces[i].size();
  }
  return true;
}

}  // namespace

// ---------------------------------------------------------------------------
// The tree.

struct Filter::Node {
  enum class Type { kAnd, kOr, kNot, kCompare, kPresent, kText };
  Type type;
  std::vector<std::shared_ptr<const Node>> children;
  Path path;
  Kind kind = Kind::kNumber;
  Op op = Op::kEq;
  double number = 0;
  std::string text;  // lower case for text matches

  bool Matches(const Message& record) const;
  bool CompareOne(const Scalar& value) const;
};

bool Filter::Node::CompareOne(const Scalar& value) const {
  if (kind == Kind::kString) {
    const std::string& s = std::get<std::string>(value);
    switch (op) {
      case Op::kHas:
        return FindLinear(absl::AsciiStrToLower(s), text) != absl::string_view::npos;
      case Op::kEq:
        return text.find('*') != std::string::npos ? GlobMatch(text, s) : s == text;
      case Op::kNe:
        return s != text;
      case Op::kLt:
        return s < text;
      case Op::kLe:
        return s <= text;
      case Op::kGt:
        return s > text;
      case Op::kGe:
        return s >= text;
    }
    return false;
  }
  const double v = std::get<double>(value);
  switch (op) {
    case Op::kEq:
    case Op::kHas:
      return v == number;
    case Op::kNe:
      return v != number;
    case Op::kLt:
      return v < number;
    case Op::kLe:
      return v <= number;
    case Op::kGt:
      return v > number;
    case Op::kGe:
      return v >= number;
  }
  return false;
}

bool Filter::Node::Matches(const Message& record) const {
  switch (type) {
    case Type::kAnd:
      for (const auto& child : children) {
        if (!child->Matches(record)) return false;
      }
      return true;
    case Type::kOr:
      for (const auto& child : children) {
        if (child->Matches(record)) return true;
      }
      return false;
    case Type::kNot:
      return !children[0]->Matches(record);
    case Type::kPresent:
      return PresentAt(record, path);
    case Type::kText: {
      const auto* f = record.GetDescriptor()->FindFieldByName("display_name");
      return f != nullptr &&
             FindLinear(absl::AsciiStrToLower(record.GetReflection()->GetString(record, f)),
                        text) != absl::string_view::npos;
    }
    case Type::kCompare: {
      const std::vector<Scalar> values = ValuesAt(record, path);
      // A repeated field matches when any element does; != when none is equal.
      if (op == Op::kNe) {
        if (values.empty()) return false;
        for (const Scalar& v : values) {
          if (!CompareOne(v)) return false;
        }
        return true;
      }
      for (const Scalar& v : values) {
        if (CompareOne(v)) return true;
      }
      return false;
    }
  }
  return false;
}

// ---------------------------------------------------------------------------
// Lexer and parser.

namespace {

struct Token {
  enum class Type { kEnd, kLParen, kRParen, kString, kWord, kComparator };
  Type type;
  std::string text;
  size_t position;
};

class Parser {
 public:
  Parser(absl::string_view text, const Descriptor* descriptor)
      : text_(text), descriptor_(descriptor) {}

  absl::StatusOr<std::shared_ptr<const Filter::Node>> Parse() {
    if (absl::Status s = Lex(); !s.ok()) return s;
    if (tokens_.size() == 1) return std::shared_ptr<const Filter::Node>();
    auto node = Expression();
    if (!node.ok()) return node.status();
    if (Peek().type != Token::Type::kEnd) return Error(Peek(), "unexpected text");
    return node;
  }

 private:
  using NodePtr = std::shared_ptr<const Filter::Node>;
  using Type = Filter::Node::Type;

  // `hint` follows the position, e.g. "; did you mean ...?".
  absl::Status Error(const Token& at, absl::string_view what, absl::string_view hint = "") const {
    return InvalidFieldError(
        "filter", absl::StrCat(what, " at position ", at.position + 1,
                               at.type == Token::Type::kEnd ? " (end of filter)"
                                                            : absl::StrCat(" (\"", at.text, "\")"),
                               hint));
  }

  absl::Status Lex() {
    size_t i = 0;
    while (i < text_.size()) {
      const char c = text_[i];
      if (absl::ascii_isspace(c)) {
        ++i;
      } else if (c == '(' || c == ')') {
        tokens_.push_back(
            {c == '(' ? Token::Type::kLParen : Token::Type::kRParen, std::string(1, c), i});
        ++i;
      } else if (c == '"' || c == '\'') {
        const size_t start = i++;
        std::string value;
        bool closed = false;
        while (i < text_.size()) {
          if (text_[i] == '\\' && i + 1 < text_.size()) {
            value.push_back(text_[i + 1]);
            i += 2;
          } else if (text_[i] == c) {
            closed = true;
            ++i;
            break;
          } else {
            value.push_back(text_[i++]);
          }
        }
        if (!closed) {
          return InvalidFieldError(
              "filter", absl::StrCat("unterminated string starting at position ", start + 1));
        }
        tokens_.push_back({Token::Type::kString, value, start});
      } else if (c == '=' || c == ':' || c == '<' || c == '>' || c == '!') {
        const size_t start = i++;
        std::string op(1, c);
        if (i < text_.size() && text_[i] == '=' && c != '=' && c != ':') op.push_back(text_[i++]);
        if (op == "!") {
          return InvalidFieldError("filter",
                                   absl::StrCat("\"!\" must be \"!=\" at position ", start + 1));
        }
        tokens_.push_back({Token::Type::kComparator, op, start});
      } else {
        const size_t start = i;
        while (i < text_.size() && !absl::ascii_isspace(text_[i]) && text_[i] != '(' &&
               text_[i] != ')' && text_[i] != '"' && text_[i] != '\'' && text_[i] != '=' &&
               text_[i] != ':' && text_[i] != '<' && text_[i] != '>' && text_[i] != '!') {
          ++i;
        }
        tokens_.push_back({Token::Type::kWord, std::string(text_.substr(start, i - start)), start});
      }
    }
    tokens_.push_back({Token::Type::kEnd, "", text_.size()});
    return absl::OkStatus();
  }

  const Token& Peek() const { return tokens_[pos_]; }
  bool PeekKeyword(absl::string_view keyword) const {
    return Peek().type == Token::Type::kWord && Peek().text == keyword;
  }
  bool AtSequenceEnd() const {
    return Peek().type == Token::Type::kEnd || Peek().type == Token::Type::kRParen ||
           PeekKeyword("AND") || PeekKeyword("OR");
  }

  // expression := sequence { AND sequence }
  absl::StatusOr<NodePtr> Expression() {
    if (++depth_ > 64) return Error(Peek(), "filter nested too deeply");
    std::vector<NodePtr> parts;
    while (true) {
      auto sequence = Sequence();
      if (!sequence.ok()) return sequence.status();
      parts.push_back(*sequence);
      if (!PeekKeyword("AND")) break;
      ++pos_;
    }
    --depth_;
    return Combine(Type::kAnd, std::move(parts));
  }

  // sequence := factor { factor }   (juxtaposition means AND)
  absl::StatusOr<NodePtr> Sequence() {
    std::vector<NodePtr> parts;
    do {
      auto factor = Factor();
      if (!factor.ok()) return factor.status();
      parts.push_back(*factor);
    } while (!AtSequenceEnd());
    return Combine(Type::kAnd, std::move(parts));
  }

  // factor := term { OR term }
  absl::StatusOr<NodePtr> Factor() {
    std::vector<NodePtr> parts;
    while (true) {
      auto term = Term();
      if (!term.ok()) return term.status();
      parts.push_back(*term);
      if (!PeekKeyword("OR")) break;
      ++pos_;
    }
    return Combine(Type::kOr, std::move(parts));
  }

  // term := [NOT] simple
  absl::StatusOr<NodePtr> Term() {
    if (PeekKeyword("NOT")) {
      ++pos_;
      auto inner = Simple();
      if (!inner.ok()) return inner.status();
      auto node = std::make_shared<Filter::Node>();
      node->type = Type::kNot;
      node->children.push_back(*inner);
      return NodePtr(node);
    }
    return Simple();
  }

  // simple := "(" expression ")" | restriction
  absl::StatusOr<NodePtr> Simple() {
    const Token& token = Peek();
    if (token.type == Token::Type::kLParen) {
      ++pos_;
      auto inner = Expression();
      if (!inner.ok()) return inner.status();
      if (Peek().type != Token::Type::kRParen) return Error(Peek(), "expected \")\"");
      ++pos_;
      return inner;
    }
    if (token.type == Token::Type::kString) {
      ++pos_;
      return TextNode(token.text);
    }
    if (token.type != Token::Type::kWord || PeekKeyword("AND") || PeekKeyword("OR")) {
      return Error(token, "expected a field, a value or \"(\"");
    }
    ++pos_;
    if (Peek().type != Token::Type::kComparator) return TextNode(token.text);
    const Token op = Peek();
    ++pos_;
    const Token arg = Peek();
    if (arg.type != Token::Type::kWord && arg.type != Token::Type::kString) {
      return Error(arg, absl::StrCat("expected a value after \"", op.text, "\""));
    }
    ++pos_;
    return Restriction(token, op, arg);
  }

  NodePtr TextNode(const std::string& text) {
    auto node = std::make_shared<Filter::Node>();
    node->type = Type::kText;
    node->text = absl::AsciiStrToLower(text);
    return node;
  }

  absl::StatusOr<Path> ResolvePath(const Token& token) const {
    Path path;
    const Descriptor* descriptor = descriptor_;
    const std::vector<std::string> parts = absl::StrSplit(token.text, '.');
    for (size_t i = 0; i < parts.size(); ++i) {
      const FieldDescriptor* field =
          descriptor == nullptr ? nullptr : descriptor->FindFieldByName(parts[i]);
      if (field == nullptr) {
        return Error(token, absl::StrCat("unknown field \"", parts[i], "\""),
                     DidYouMean(token.text, QueryFieldPaths(descriptor_)));
      }
      path.push_back(field);
      const bool last = i + 1 == parts.size();
      if (!last) {
        if (field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE || field->is_repeated() ||
            IsDate(field) || IsTimestamp(field)) {
          return Error(token, absl::StrCat("\"", parts[i], "\" has no fields"));
        }
        descriptor = field->message_type();
      } else if (!KindOf(field).has_value()) {
        return Error(token, absl::StrCat("\"", token.text,
                                         "\" has fields and cannot be compared; name one of them"));
      }
    }
    return path;
  }

  absl::StatusOr<NodePtr> Restriction(const Token& field_token, const Token& op_token,
                                      const Token& arg) {
    auto path = ResolvePath(field_token);
    if (!path.ok()) return path.status();
    const FieldDescriptor* leaf = path->back();
    auto node = std::make_shared<Filter::Node>();
    node->path = *path;
    if (op_token.text == ":" && arg.type == Token::Type::kWord && arg.text == "*") {
      node->type = Type::kPresent;
      return NodePtr(node);
    }
    node->type = Type::kCompare;
    static const std::map<std::string, Op> kOps = {
        {"=", Op::kEq}, {"!=", Op::kNe}, {"<", Op::kLt}, {"<=", Op::kLe},
        {">", Op::kGt}, {">=", Op::kGe}, {":", Op::kHas}};
    node->op = kOps.at(op_token.text);
    node->kind = *KindOf(leaf);
    const bool ordering = node->op != Op::kEq && node->op != Op::kNe && node->op != Op::kHas;
    switch (node->kind) {
      case Kind::kNumber:
        if (!absl::SimpleAtod(arg.text, &node->number) || !std::isfinite(node->number)) {
          return Error(arg, absl::StrCat("\"", field_token.text, "\" takes a number"));
        }
        break;
      case Kind::kString:
        node->text = node->op == Op::kHas ? absl::AsciiStrToLower(arg.text) : arg.text;
        break;
      case Kind::kBool:
        if (ordering) return Error(op_token, "true/false values cannot be ordered");
        if (arg.text == "true") {
          node->number = 1;
        } else if (arg.text == "false") {
          node->number = 0;
        } else {
          return Error(arg, absl::StrCat("\"", field_token.text, "\" takes true or false"));
        }
        break;
      case Kind::kEnum: {
        if (ordering) return Error(op_token, "enumeration values cannot be ordered");
        const auto* type = leaf->enum_type();
        const auto* value = type->FindValueByName(arg.text);
        if (value == nullptr) {
          // Accept the short form: OPEN_WEIGHTS_UNRESTRICTED for ACCESSIBILITY_OPEN_...
          for (int i = 0; i < type->value_count() && value == nullptr; ++i) {
            if (absl::EndsWith(type->value(i)->name(), absl::StrCat("_", arg.text))) {
              value = type->value(i);
            }
          }
        }
        if (value == nullptr) {
          return Error(arg,
                       absl::StrCat("\"", arg.text, "\" is not a value of ", field_token.text));
        }
        node->number = value->number();
        break;
      }
      case Kind::kDate: {
        absl::CivilDay day;
        if (!absl::ParseCivilTime(arg.text, &day)) {
          return Error(arg, absl::StrCat("\"", field_token.text, "\" takes a date YYYY-MM-DD"));
        }
        node->number = static_cast<double>(day.year() * 10000 + day.month() * 100 + day.day());
        break;
      }
      case Kind::kTimestamp: {
        absl::Time time;
        std::string error;
        if (!absl::ParseTime(absl::RFC3339_full, arg.text, &time, &error)) {
          return Error(arg, absl::StrCat("\"", field_token.text,
                                         "\" takes an RFC 3339 time, e.g. 2024-01-01T00:00:00Z"));
        }
        node->number = absl::ToDoubleSeconds(time - absl::UnixEpoch());
        break;
      }
    }
    return NodePtr(node);
  }

  static NodePtr Combine(Type type, std::vector<NodePtr> parts) {
    if (parts.size() == 1) return parts[0];
    auto node = std::make_shared<Filter::Node>();
    node->type = type;
    node->children = std::move(parts);
    return node;
  }

  absl::string_view text_;
  const Descriptor* descriptor_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

absl::StatusOr<Filter> Filter::Parse(absl::string_view text, const Descriptor* descriptor) {
  if (text.size() > kMaxFilterLength) {
    return InvalidFieldError(
        "filter",
        absl::StrCat("is ", text.size(), " characters long; the limit is ", kMaxFilterLength));
  }
  auto root = Parser(text, descriptor).Parse();
  if (!root.ok()) return root.status();
  Filter filter;
  filter.root_ = *std::move(root);
  return filter;
}

bool Filter::Matches(const Message& record) const {
  return root_ == nullptr || root_->Matches(record);
}

namespace {

void CollectNecessary(const Filter::Node& node, std::vector<Filter::NecessaryTest>& out) {
  using Test = Filter::NecessaryTest;
  if (node.type == Filter::Node::Type::kAnd) {
    for (const auto& child : node.children) CollectNecessary(*child, out);
    return;
  }
  if (node.type != Filter::Node::Type::kCompare || node.path.size() != 1) return;
  const FieldDescriptor* field = node.path[0];
  if (node.kind == Kind::kString) {
    // A list of text: `domains:"vis"` needs an element containing "vis"
    // (ignoring case); `domains = "Vision"` an element equal to it, so one
    // containing its lower case too. Globs and orderings are left to Matches.
    if (!field->is_repeated()) return;
    if (node.op == Op::kHas || (node.op == Op::kEq && node.text.find('*') == std::string::npos)) {
      out.push_back(Test{field->name(), Test::Op::kContains, 0, absl::AsciiStrToLower(node.text)});
    }
    return;
  }
  // Numbers and dates: only singular fields with presence, whose "no value"
  // (which passes no comparison here) is the store's NULL.
  if ((node.kind != Kind::kNumber && node.kind != Kind::kDate) || field->is_repeated() ||
      !field->has_presence() || !std::isfinite(node.number)) {
    return;
  }
  static const std::map<Op, Test::Op> kTests = {
      {Op::kEq, Test::Op::kEqual},   {Op::kHas, Test::Op::kEqual},
      {Op::kLt, Test::Op::kLess},    {Op::kLe, Test::Op::kLessOrEqual},
      {Op::kGt, Test::Op::kGreater}, {Op::kGe, Test::Op::kGreaterOrEqual}};
  const auto test = kTests.find(node.op);
  if (test == kTests.end()) return;  // != is left to Matches
  out.push_back(Test{field->name(), test->second, node.number, ""});
}

}  // namespace

std::vector<Filter::NecessaryTest> Filter::NecessaryTests() const {
  std::vector<NecessaryTest> tests;
  if (root_ != nullptr) CollectNecessary(*root_, tests);
  return tests;
}

// ---------------------------------------------------------------------------
// order_by.

absl::StatusOr<std::vector<OrderKey>> ParseOrderBy(absl::string_view text,
                                                   const Descriptor* descriptor) {
  std::vector<OrderKey> keys;
  if (text.size() > kMaxFilterLength) {
    return InvalidFieldError("order_by", "is too long");
  }
  for (absl::string_view clause : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    std::vector<absl::string_view> words = absl::StrSplit(clause, ' ', absl::SkipWhitespace());
    if (words.empty() || words.size() > 2 ||
        (words.size() == 2 && words[1] != "desc" && words[1] != "asc")) {
      return InvalidFieldError("order_by", absl::StrCat("\"", absl::StripAsciiWhitespace(clause),
                                                        "\" is not \"field\", \"field asc\" or "
                                                        "\"field desc\""));
    }
    OrderKey key;
    key.descending = words.size() == 2 && words[1] == "desc";
    const Descriptor* current = descriptor;
    const std::vector<std::string> parts = absl::StrSplit(words[0], '.');
    for (size_t i = 0; i < parts.size(); ++i) {
      const FieldDescriptor* field =
          current == nullptr ? nullptr : current->FindFieldByName(parts[i]);
      if (field == nullptr) {
        return InvalidFieldError("order_by",
                                 absl::StrCat("unknown field \"", words[0], "\"",
                                              DidYouMean(words[0], QueryFieldPaths(descriptor))));
      }
      key.path.push_back(field);
      const bool last = i + 1 == parts.size();
      if (field->is_repeated() || (last && !KindOf(field).has_value()) ||
          (!last && (field->message_type() == nullptr || IsDate(field) || IsTimestamp(field)))) {
        return InvalidFieldError(
            "order_by", absl::StrCat("\"", words[0], "\" is not a single value to sort by"));
      }
      current = field->message_type();
    }
    keys.push_back(std::move(key));
  }
  return keys;
}

std::optional<std::variant<double, std::string>> OrderValueOf(const Message& record,
                                                              const OrderKey& key) {
  std::vector<Scalar> values = ValuesAt(record, key.path);
  if (values.empty() || !PresentAt(record, key.path)) return std::nullopt;
  return std::move(values[0]);
}

bool OrderedBefore(const Message& a, const Message& b, const std::vector<OrderKey>& keys) {
  for (const OrderKey& key : keys) {
    const std::optional<Scalar> va = OrderValueOf(a, key);
    const std::optional<Scalar> vb = OrderValueOf(b, key);
    if (va.has_value() != vb.has_value()) return va.has_value();  // unset last
    if (!va.has_value()) continue;
    if (*va == *vb) continue;
    return key.descending ? *vb < *va : *va < *vb;
  }
  return false;
}

}  // namespace modelatlas::query
