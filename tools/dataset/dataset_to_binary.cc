// Converts the shipped dataset from its committed JSON form to protobuf's
// binary form at build time, so that the catalog parses it in a fraction of
// the time (catalog-service/CMakeLists.txt runs this; dataset.cc embeds both).
//   dataset-to-binary INPUT.json OUTPUT.binpb
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/util/json_util.h"
#include "modelatlas/catalog/v1/dataset.pb.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s INPUT.json OUTPUT.binpb\n", argv[0]);
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", argv[1]);
    return 1;
  }
  modelatlas::catalog::v1::Dataset dataset;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  auto status = google::protobuf::util::JsonStringToMessage(text.str(), &dataset, options);
  if (!status.ok()) {
    std::fprintf(stderr, "%s: %s\n", argv[1], std::string(status.message()).c_str());
    return 1;
  }
  std::string binary;
  {
    google::protobuf::io::StringOutputStream stream(&binary);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    if (!dataset.SerializeToCodedStream(&coded)) return 1;
  }
  std::ofstream out(argv[2], std::ios::binary | std::ios::trunc);
  out << binary;
  return out.good() ? 0 : 1;
}
