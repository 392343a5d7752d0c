// The web front's page pieces, without a network: the workload from the
// query string, record links, the memory picture, the plan table, the
// record sections and the answers, every record string escaped.
#include "web/page.h"

#include <gtest/gtest.h>

#include "web/model_page.h"
#include "web/model_record.h"

namespace modelatlas::web {
namespace {

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(WorkloadTest, ReadsTheQueryAndExplainsWhatItCannotUse) {
  Workload w = ReadWorkload({{"context", "8192"}, {"batch", "4"}, {"weights", "gptq_int4"}});
  EXPECT_EQ(w.context, 8192);
  EXPECT_EQ(w.batch, 4);
  EXPECT_EQ(w.weights, estimator::v1::NUMBER_FORMAT_GPTQ_INT4);
  EXPECT_TRUE(w.problem.empty());
  EXPECT_EQ(WorkloadText(w), "8,192-token context, batch 4, weights GPTQ_INT4, KV cache BF16");
  for (const Params& bad : std::vector<Params>{{{"context", "0"}},
                                               {{"context", "x"}},
                                               {{"batch", "-1"}},
                                               {{"cards", "3"}},
                                               {{"weights", "int3"}},
                                               {{"images", "-1"}},
                                               {{"images", "1001"}},
                                               {{"images", "two"}},
                                               {{"weights", "unspecified"}}}) {
    EXPECT_FALSE(ReadWorkload(bad).problem.empty()) << bad.begin()->second;
  }
  const Workload defaults = ReadWorkload({});
  EXPECT_EQ(defaults.context, 0);
  EXPECT_EQ(defaults.batch, 1);
  // No weights asked: the model's published format, named once the
  // estimator has resolved it.
  EXPECT_EQ(defaults.weights, estimator::v1::NUMBER_FORMAT_UNSPECIFIED);
  EXPECT_EQ(ReadWorkload({{"weights", "published"}}).weights,
            estimator::v1::NUMBER_FORMAT_UNSPECIFIED);
  EXPECT_TRUE(ReadWorkload({{"weights", "published"}}).problem.empty());
  EXPECT_TRUE(Has(WorkloadText(defaults), "weights as published"));
  estimator::v1::ResolvedWorkload resolved;
  resolved.mutable_workload()->set_weight_format(estimator::v1::NUMBER_FORMAT_MXFP4);
  resolved.set_weight_format_from_checkpoint(true);
  EXPECT_TRUE(Has(WorkloadText(defaults, &resolved),
                  "weights MXFP4 (the published checkpoint's format), KV cache BF16"))
      << WorkloadText(defaults, &resolved);
  resolved.mutable_workload()->set_weight_format(estimator::v1::NUMBER_FORMAT_BF16);
  resolved.set_weight_format_from_checkpoint(false);
  EXPECT_TRUE(Has(WorkloadText(defaults, &resolved),
                  "weights BF16 (the default: no quantized checkpoint on record)"));
  // A checkpoint quantized in a way not sized: the default, and why it may
  // overstate the download.
  resolved.set_checkpoint_quantization_not_sized(true);
  EXPECT_TRUE(Has(WorkloadText(defaults, &resolved),
                  "weights BF16 (the default: the published checkpoint is quantized in a way "
                  "not sized here"))
      << WorkloadText(defaults, &resolved);
  // A format asked for is named as asked, whatever the echo.
  EXPECT_TRUE(Has(WorkloadText(w, &resolved), "weights GPTQ_INT4, KV cache BF16"));

  // Images per sequence: read from the address (0 is a text-only request),
  // and stated as the estimator echoed them, the default said to be one.
  EXPECT_EQ(ReadWorkload({{"images", "0"}}).images, 0);
  EXPECT_FALSE(defaults.images.has_value());
  EXPECT_FALSE(Has(WorkloadText(defaults, &resolved), "image"));
  resolved.mutable_workload()->set_images_per_sequence(1);
  resolved.set_images_per_sequence_defaulted(true);
  EXPECT_TRUE(Has(WorkloadText(w, &resolved),
                  "8,192-token context, 1 image per sequence (the default), batch 4"))
      << WorkloadText(w, &resolved);
  resolved.mutable_workload()->set_images_per_sequence(3);
  resolved.set_images_per_sequence_defaulted(false);
  EXPECT_TRUE(Has(WorkloadText(w, &resolved), "context, 3 images per sequence, batch 4"))
      << WorkloadText(w, &resolved);
}

TEST(WorkloadTest, FormKeepsStateInTheUrl) {
  Workload w;
  w.context = 4096;
  w.weights = estimator::v1::NUMBER_FORMAT_INT8;
  const std::string form = WorkloadForm("/hardware/x", w, true, {{"domain", "\"><b>"}});
  EXPECT_TRUE(Has(form, "method=\"get\""));
  EXPECT_TRUE(Has(form, "<option value=\"int8\" selected>"));
  EXPECT_TRUE(Has(form, "value=\"&quot;&gt;&lt;b&gt;\""));
  EXPECT_TRUE(Has(form, "name=\"cards\""));
  EXPECT_FALSE(Has(form, "name=\"images\""));
  // A model with cross-attention layers asks for its images (one unless
  // the address says otherwise).
  w.images_asked = true;
  EXPECT_TRUE(Has(WorkloadForm("/models/x", w, false, {}),
                  "name=\"images\" type=\"number\" "
                  "min=\"0\" max=\"1000\" value=\"1\""));
  w.images = 4;
  EXPECT_TRUE(Has(WorkloadForm("/models/x", w, false, {}), "max=\"1000\" value=\"4\""));
}

TEST(LinksTest, RecordPathsAndExternalLinks) {
  EXPECT_EQ(RecordPath("models/llama-2-7b"), "/models/llama-2-7b");
  EXPECT_EQ(RecordPath("hardware/a b"), "/hardware/a%20b");
  EXPECT_EQ(RecordId("hardware/nvidia-h100"), "nvidia-h100");
  EXPECT_EQ(ExternalLink("javascript:alert(1)"), "javascript:alert(1)");
  EXPECT_TRUE(Has(ExternalLink("https://x.org/?a=1&b=\"2\""),
                  "href=\"https://x.org/?a=1&amp;b=&quot;2&quot;\""));
  EXPECT_EQ(Item("Empty", ""), "");
  EXPECT_EQ(Item("Only a note", "", "from <b>"),
            "<dt>Only a note</dt><dd>—<p class=\"note\">from &lt;b&gt;</p></dd>");
}

TEST(ErrorPageTest, NotFoundNamesWhatWasAsked) {
  const Page page = ErrorPage(grpc::Status(grpc::NOT_FOUND, "x"), "model", "<gpt-9>");
  EXPECT_EQ(page.status, 404);
  EXPECT_TRUE(Has(page.html, "No model called “&lt;gpt-9&gt;”"));
  EXPECT_EQ(ErrorPage(grpc::Status(grpc::INVALID_ARGUMENT, "bad"), "model", "x").status, 400);
  EXPECT_EQ(ErrorPage(grpc::Status(grpc::UNAVAILABLE, "down"), "model", "x").status, 503);
}

estimator::v1::PlanInferenceResponse Plan() {
  estimator::v1::PlanInferenceResponse plan;
  auto* memory = plan.mutable_memory();
  memory->set_available(true);
  memory->set_model("models/m");
  for (const auto& [name, bytes] : std::vector<std::pair<std::string, int64_t>>{
           {"weights", 16'000'000'000}, {"kv_cache", 500'000'000}, {"overhead", 1'000'000'000}}) {
    auto* line = memory->add_lines();
    line->set_component(name);
    line->set_bytes(bytes);
  }
  memory->set_total_bytes(17'500'000'000);
  for (const auto& [name, usable] : std::vector<std::pair<std::string, int64_t>>{
           {"<Big> card", 77'000'000'000}, {"Small card", 15'000'000'000}}) {
    auto* p = plan.add_plans();
    p->set_hardware("hardware/" + std::string(name == "Small card" ? "small" : "big"));
    p->set_display_name(name);
    p->set_usable_bytes_per_card(usable);
    p->set_fits(true);
    p->set_fits_on_one_card(usable > 17'500'000'000);
    p->set_cards(usable > 17'500'000'000 ? 1 : 2);
    p->set_decode_tokens_per_second(120.44);
  }
  return plan;
}

TEST(MemoryPictureTest, ABarPerComponentAndPerCard) {
  const std::string svg = MemoryPicture(Plan());
  EXPECT_TRUE(Has(svg, "<svg class=\"memory\""));
  EXPECT_TRUE(Has(svg, ">Weights<"));
  EXPECT_TRUE(Has(svg, ">KV cache<"));
  EXPECT_TRUE(Has(svg, ">Total needed<"));
  EXPECT_TRUE(Has(svg, "&lt;Big&gt; card"));
  EXPECT_TRUE(Has(svg, "15 GB: one card is too small"));
  EXPECT_FALSE(Has(svg, "<Big>"));
  EXPECT_FALSE(Has(svg, "style="));
}

TEST(PlanTableTest, LinksEachCardAndTheDetailedPlan) {
  const std::string table = PlanTable(Plan(), "m", "&context=4096", 1);
  EXPECT_TRUE(Has(table, "href=\"/hardware/big\""));
  EXPECT_TRUE(Has(table, "href=\"/plan?model=m&amp;hardware=big&amp;context=4096\""));
  EXPECT_TRUE(Has(table, "120.4"));
  EXPECT_FALSE(Has(table, "Small card"));  // one row asked for
  EXPECT_FALSE(Has(table, "doubtful"));
}

// A speed resting on a bandwidth doubtful on its record is marked, the
// reason escaped in the mark's title.
TEST(PlanTableTest, MarksASpeedOnADoubtfulBandwidth) {
  estimator::v1::PlanInferenceResponse plan = Plan();
  plan.mutable_plans(0)->set_decode_bound_doubtful("bandwidth doubtful: 1.8e+04 GB/s <x>");
  const std::string table = PlanTable(plan, "m", "", 1);
  EXPECT_TRUE(Has(table,
                  "120.4 <span class=\"bandwidth-doubtful\" title=\"bandwidth doubtful: 1.8e+04 "
                  "GB/s &lt;x&gt;\">(doubtful)</span>"))
      << table;
}

TEST(RecordTest, SectionsAndAnswersEscapeEveryRecordString) {
  common::v1::Model m;
  m.set_name("models/x");
  m.set_display_name("<script>alert(1)</script>");
  m.add_organizations("A & B");
  m.set_parameters(395e6);
  m.set_parameters_notes("395M (Table 6) <i>");
  m.add_training_dataset_size_datapoints(1.3e9);
  m.add_domains("Language");
  m.set_training_compute_flop(1.5405e20);
  m.set_training_power_draw_watts(262600);
  m.set_open_model_weights(false);
  m.mutable_publication_date()->set_year(2019);
  m.mutable_publication_date()->set_month(4);
  m.mutable_publication_date()->set_day(20);
  const std::string html = RecordSections(m) + Answers(m, nullptr, "");
  EXPECT_FALSE(Has(html, "<script>"));
  EXPECT_FALSE(Has(html, "<i>"));
  EXPECT_TRUE(Has(html, "A &amp; B"));
  EXPECT_TRUE(Has(html, "395M"));
  EXPECT_TRUE(Has(html, "1,300,000,000 tokens"));
  EXPECT_TRUE(Has(html, "1.5 × 10²⁰ FLOP"));
  EXPECT_TRUE(Has(html, "262.6 kW"));
  EXPECT_TRUE(Has(html, "20 April 2019"));
  EXPECT_TRUE(Has(html, "Closed — provider access only"));
  EXPECT_TRUE(Has(html, "Is &lt;script&gt;alert(1)&lt;/script&gt; open source?"));
  EXPECT_TRUE(Has(html, "have not been published"));
  EXPECT_FALSE(OpenWeights(m));
}

// The architecture line says what changes the memory answer: Llama 3.2
// Vision's cross-attention layers (they cache the image, not the text) and
// the parts beside the language model.
TEST(RecordTest, TheArchitectureLineNamesCrossAttentionAndTheEncoders) {
  common::v1::Model m;
  m.set_name("models/llama-3-2-11b");
  common::v1::Architecture* a = m.mutable_architecture();
  a->set_num_layers(40);
  a->set_hidden_size(4096);
  a->set_num_attention_heads(32);
  a->set_num_key_value_heads(8);
  a->set_num_cross_attention_layers(8);
  a->set_cross_attention_positions(6404);
  a->add_encoder_parts()->set_kind("vision_encoder");
  a->add_encoder_parts()->set_kind("projector");
  const std::string html = RecordSections(m);
  EXPECT_TRUE(Has(html,
                  "8 of the layers attend to an image (cross-attention, 6,404 image "
                  "positions cached per sequence); with its vision encoder, projector"))
      << html;
  a->clear_num_cross_attention_layers();
  a->clear_encoder_parts();
  EXPECT_FALSE(Has(RecordSections(m), "cross-attention"));
  EXPECT_FALSE(Has(RecordSections(m), "with its"));
}

// Step-3.5-Flash's full-attention layers have query heads of their own
// (64 beside the sliding layers' 96): the line names both.
TEST(RecordTest, TheArchitectureLineNamesTheFullAttentionLayersOwnHeads) {
  common::v1::Model m;
  m.set_name("models/step-3-5-flash");
  common::v1::Architecture* a = m.mutable_architecture();
  a->set_num_layers(45);
  a->set_hidden_size(4096);
  a->set_num_attention_heads(96);
  a->set_num_key_value_heads(8);
  a->set_head_dim(128);
  a->set_num_sliding_window_layers(33);
  a->set_global_head_dim(128);
  a->set_num_global_key_value_heads(8);
  a->set_num_global_attention_heads(64);
  EXPECT_TRUE(Has(RecordSections(m),
                  "96 attention heads (8 key/value heads); 64 attention heads and 8 key/value "
                  "heads of 128 in its 12 full-attention layers"))
      << RecordSections(m);
}

// MiMo-V2-Flash's values are narrower than its queries and keys (128
// beside 192): the line names both widths, and only when they differ.
TEST(RecordTest, TheArchitectureLineNamesAValueWidthOfItsOwn) {
  common::v1::Model m;
  m.set_name("models/mimo-v2-flash");
  common::v1::Architecture* a = m.mutable_architecture();
  a->set_num_layers(48);
  a->set_hidden_size(4096);
  a->set_num_attention_heads(64);
  a->set_num_key_value_heads(8);
  a->set_head_dim(192);
  a->set_v_head_dim(128);
  a->set_num_sliding_window_layers(39);
  a->set_num_global_key_value_heads(4);
  EXPECT_TRUE(Has(RecordSections(m),
                  "64 attention heads (8 key/value heads); query and key heads of 192, value "
                  "heads of 128; 4 key/value heads of 192 in its 9 full-attention layers"))
      << RecordSections(m);
  a->set_v_head_dim(192);
  EXPECT_FALSE(Has(RecordSections(m), "query and key heads of")) << RecordSections(m);
}

// Llama-3.1-Nemotron-Ultra-253B's layers differ (block_configs): the line
// says how many have attention (the KV cache's) and that the MLPs vary.
TEST(RecordTest, TheArchitectureLineSaysWhenTheLayersDiffer) {
  common::v1::Model m;
  m.set_name("models/llama-nemotron-ultra-253b");
  common::v1::Architecture* a = m.mutable_architecture();
  a->set_num_layers(4);
  a->set_hidden_size(16384);
  a->set_num_attention_heads(128);
  a->set_num_key_value_heads(8);
  a->set_intermediate_size(425984);
  a->set_num_attention_layers(2);
  for (int64_t width : {5376, 0, 425984, 0}) a->add_layer_intermediate_sizes(width);
  EXPECT_TRUE(Has(RecordSections(m),
                  "128 attention heads (8 key/value heads); attention in 2 of the layers, each "
                  "layer&#39;s MLP of its own width (up to 425,984), 2 without one"))
      << RecordSections(m);
  a->clear_layer_intermediate_sizes();
  EXPECT_FALSE(Has(RecordSections(m), "attention in 2 of the layers")) << RecordSections(m);
}

}  // namespace
}  // namespace modelatlas::web
