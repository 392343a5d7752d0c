#include "catalog-service/import/write_spool.h"

#include <cstring>
#include <variant>

#include "absl/strings/str_cat.h"

namespace modelatlas::catalog {
namespace {

// The encoding is private to one process and one spool (never read by
// another binary): fixed-width integers in the machine's byte order, each
// string as its 8-byte length and its bytes.
template <typename Integer>
void PutInteger(Integer value, std::string* out) {
  out->append(reinterpret_cast<const char*>(&value), sizeof(value));
}
void PutString(absl::string_view text, std::string* out) {
  PutInteger<uint64_t>(text.size(), out);
  out->append(text.data(), text.size());
}

// Reads what Put* wrote, failing once past the end.
class Reader {
 public:
  explicit Reader(absl::string_view bytes) : bytes_(bytes) {}
  template <typename Number>
  bool Integer(Number* value) {
    if (bytes_.size() < sizeof(*value)) return false;
    std::memcpy(value, bytes_.data(), sizeof(*value));
    bytes_.remove_prefix(sizeof(*value));
    return true;
  }
  bool String(std::string* text) {
    uint64_t size = 0;
    if (!Integer(&size) || bytes_.size() < size) return false;
    text->assign(bytes_.data(), size);
    bytes_.remove_prefix(size);
    return true;
  }
  bool done() const { return bytes_.empty(); }

 private:
  absl::string_view bytes_;
};

enum ValueTag : uint8_t { kUnset = 0, kNumber = 1, kText = 2 };

void PutWrite(const BatchWrite& write, std::string* out) {
  const RecordWrite& record = write.record;
  PutInteger<uint8_t>(static_cast<uint8_t>(write.operation), out);
  PutInteger<int64_t>(write.expected_revision, out);
  PutInteger<uint8_t>(write.defer_derived_rows ? 1 : 0, out);
  PutInteger<uint8_t>(static_cast<uint8_t>(record.kind), out);
  PutString(record.id, out);
  PutString(record.display_name, out);
  PutInteger<uint64_t>(record.lookup_keys.size(), out);
  for (const std::string& key : record.lookup_keys) PutString(key, out);
  PutString(record.payload, out);
  for (const OrderValue& value : record.order_values) {
    if (const double* number = std::get_if<double>(&value)) {
      PutInteger<uint8_t>(kNumber, out);
      PutInteger<double>(*number, out);
    } else if (const std::string* text = std::get_if<std::string>(&value)) {
      PutInteger<uint8_t>(kText, out);
      PutString(*text, out);
    } else {
      PutInteger<uint8_t>(kUnset, out);
    }
  }
}

bool ReadWrite(Reader& in, BatchWrite* write) {
  RecordWrite& record = write->record;
  uint8_t operation = 0, defer = 0, kind = 0;
  uint64_t keys = 0;
  if (!in.Integer(&operation) || !in.Integer(&write->expected_revision) || !in.Integer(&defer) ||
      !in.Integer(&kind) || !in.String(&record.id) || !in.String(&record.display_name) ||
      !in.Integer(&keys)) {
    return false;
  }
  write->operation = static_cast<BatchWrite::Operation>(operation);
  write->defer_derived_rows = defer != 0;
  record.kind = static_cast<RecordKind>(kind);
  record.lookup_keys.resize(keys);
  for (std::string& key : record.lookup_keys) {
    if (!in.String(&key)) return false;
  }
  if (!in.String(&record.payload)) return false;
  for (OrderValue& value : record.order_values) {
    uint8_t tag = 0;
    if (!in.Integer(&tag)) return false;
    if (tag == kNumber) {
      double number = 0;
      if (!in.Integer(&number)) return false;
      value = number;
    } else if (tag == kText) {
      std::string text;
      if (!in.String(&text)) return false;
      value = std::move(text);
    } else {
      value = std::monostate();
    }
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<WriteSpool>> WriteSpool::Create(const std::string& directory) {
  absl::StatusOr<std::unique_ptr<SpoolFile>> file = SpoolFile::Create(directory);
  if (!file.ok()) return file.status();
  return std::unique_ptr<WriteSpool>(new WriteSpool(*std::move(file)));
}

absl::Status WriteSpool::Append(const std::vector<BatchWrite>& writes) {
  // A batch is its byte count and write count, then the writes.
  buffer_.clear();
  PutInteger<uint64_t>(0, &buffer_);
  PutInteger<uint64_t>(writes.size(), &buffer_);
  for (const BatchWrite& write : writes) PutWrite(write, &buffer_);
  const uint64_t body_bytes = buffer_.size() - sizeof(uint64_t);
  std::memcpy(buffer_.data(), &body_bytes, sizeof(body_bytes));
  if (absl::Status s = file_->Append(buffer_); !s.ok()) return s;
  writes_ += static_cast<int64_t>(writes.size());
  return absl::OkStatus();
}

absl::Status WriteSpool::Next(std::vector<BatchWrite>* batch) {
  batch->clear();
  if (read_offset_ >= file_->size_bytes()) return absl::OkStatus();
  auto lost = [&](absl::string_view what) {
    return absl::DataLossError(absl::StrCat("the atomic import's spooled writes at byte ",
                                            read_offset_, " of ", file_->size_bytes(), ": ", what));
  };
  std::string header_bytes;
  absl::StatusOr<absl::string_view> header =
      file_->Read(read_offset_, sizeof(uint64_t), &header_bytes);
  if (!header.ok()) return header.status();
  uint64_t body_bytes = 0;
  if (header->size() != sizeof(body_bytes)) return lost("a batch's length is cut off");
  std::memcpy(&body_bytes, header->data(), sizeof(body_bytes));
  const int64_t body_offset = read_offset_ + static_cast<int64_t>(sizeof(body_bytes));
  if (body_bytes > static_cast<uint64_t>(file_->size_bytes() - body_offset)) {
    return lost("a batch is cut off");
  }
  absl::StatusOr<absl::string_view> body = file_->Read(body_offset, body_bytes, &buffer_);
  if (!body.ok()) return body.status();
  if (body->size() != body_bytes) return lost("a batch is cut off");
  Reader in(*body);
  uint64_t count = 0;
  if (!in.Integer(&count) || count == 0) return lost("a batch has no writes");
  batch->resize(count);
  for (BatchWrite& write : *batch) {
    if (!ReadWrite(in, &write)) return lost("a write is cut off");
  }
  if (!in.done()) return lost("a batch has bytes after its writes");
  read_offset_ = body_offset + static_cast<int64_t>(body_bytes);
  return absl::OkStatus();
}

}  // namespace modelatlas::catalog
