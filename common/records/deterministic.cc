#include "common/records/deterministic.h"

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace modelatlas {

std::string DeterministicBytes(const google::protobuf::Message& message) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    // Without this, map entries come in hash-table order.
    coded.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&coded);
  }  // The coded stream flushes into `bytes` as it goes out of scope.
  return bytes;
}

}  // namespace modelatlas
