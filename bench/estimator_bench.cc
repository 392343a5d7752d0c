// The estimator's formulas in process: one memory estimate (with its
// arithmetic text), one plan on a device, and the fit matrix of 3,000 models
// x 200 devices x 4 weight formats (numbers only).
//
//   build/bench/estimator_bench
#include <benchmark/benchmark.h>

#include <random>

#include "estimator-service/core/fit_matrix.h"
#include "estimator-service/core/inference_memory.h"
#include "estimator-service/core/parameters.h"
#include "estimator-service/core/plan.h"
#include "estimator-service/core/training_memory.h"
#include "estimator-service/core/training_run.h"

namespace modelatlas::estimator {
namespace {

Architecture Llama31_8B() {
  Architecture a;
  a.num_layers = 32;
  a.hidden_size = 4096;
  a.num_attention_heads = 32;
  a.num_key_value_heads = 8;
  a.head_dim = 128;
  a.intermediate_size = 14336;
  a.gated_mlp = true;
  a.vocab_size = 128256;
  a.max_context_length = 131072;
  return a;
}

void BM_InferenceMemoryEstimate(benchmark::State& state) {
  InferenceMemoryInput input;
  input.parameters = 8030261248;
  input.architecture = Llama31_8B();
  input.workload.context_length_tokens = 8192;
  for (auto _ : state) {
    auto estimate = EstimateInferenceMemory(input);
    benchmark::DoNotOptimize(estimate);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_InferenceMemoryEstimate);

// The same estimate as the computed memory answer makes it: written into a
// scratch pair reused from call to call (EstimateInferenceMemoryInto, as a
// pooled MemoryAnswer holds it), so the figure is the formulas and their
// texts without allocation. "varied": four shapes in turn (dense GQA with a
// different context, sliding window, MoE, MLA), so that nothing remembered
// from the previous call is reused.
void BM_InferenceMemoryEstimateInto(benchmark::State& state, bool varied) {
  std::vector<InferenceMemoryInput> inputs(1);
  inputs[0].parameters = 8030261248;
  inputs[0].architecture = Llama31_8B();
  inputs[0].workload.context_length_tokens = 8192;
  inputs[0].split_figures = false;
  if (varied) {
    InferenceMemoryInput mistral = inputs[0];
    mistral.parameters = 7241732096;
    mistral.architecture->intermediate_size = 14336;
    mistral.architecture->vocab_size = 32000;
    mistral.architecture->sliding_window = 4096;
    mistral.workload.context_length_tokens = 32768;
    InferenceMemoryInput moe = inputs[0];
    moe.parameters = 46702792704;
    moe.architecture->num_experts = 8;
    moe.architecture->num_experts_per_token = 2;
    moe.architecture->vocab_size = 32000;
    moe.workload.batch_size = 4;
    InferenceMemoryInput mla = inputs[0];
    mla.parameters = 15706484224;
    mla.architecture->num_layers = 27;
    mla.architecture->hidden_size = 2048;
    mla.architecture->num_attention_heads = 16;
    mla.architecture->num_key_value_heads = 16;
    mla.architecture->kv_lora_rank = 512;
    mla.architecture->qk_rope_head_dim = 64;
    mla.architecture->vocab_size = 102400;
    mla.workload.kv_cache_format = NumberFormat::kFp8;
    inputs.push_back(mistral);
    inputs.push_back(moe);
    inputs.push_back(mla);
  }
  InferenceArithmetic scratch;
  InferenceMemoryEstimate estimate;
  size_t next = 0;
  for (auto _ : state) {
    const absl::Status sized = EstimateInferenceMemoryInto(inputs[next], &scratch, &estimate);
    if (++next == inputs.size()) next = 0;
    benchmark::DoNotOptimize(sized);
    benchmark::DoNotOptimize(estimate.lines.data());
  }
  if (estimate.lines.size() < 4) state.SkipWithError("no lines");
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(BM_InferenceMemoryEstimateInto, llama_8b_8192, false);
BENCHMARK_CAPTURE(BM_InferenceMemoryEstimateInto, varied, true);

// The same on 4,096 shapes in turn (layers, heads, widths, parameters and
// context all differ from one call to the next), so that no text written
// for an earlier call can be reused: what a request for a model not asked
// for recently costs.
void BM_InferenceMemoryEstimateIntoEveryCallNew(benchmark::State& state) {
  std::vector<InferenceMemoryInput> inputs(4096);
  for (size_t i = 0; i < inputs.size(); ++i) {
    InferenceMemoryInput& input = inputs[i];
    const int step = static_cast<int>(i);
    input.parameters = 8030261248.0 + 4096.0 * step;
    input.architecture = Llama31_8B();
    input.architecture->num_layers = 16 + step % 48;
    input.architecture->num_key_value_heads = 1 << (step % 4);
    input.architecture->hidden_size = 2048 + 128 * (step % 32);
    input.architecture->intermediate_size = 8192 + 256 * step;
    input.workload.context_length_tokens = 1024 + step;
    input.split_figures = false;
  }
  InferenceArithmetic scratch;
  InferenceMemoryEstimate estimate;
  size_t next = 0;
  for (auto _ : state) {
    const absl::Status sized = EstimateInferenceMemoryInto(inputs[next], &scratch, &estimate);
    if (++next == inputs.size()) next = 0;
    benchmark::DoNotOptimize(sized);
    benchmark::DoNotOptimize(estimate.lines.data());
  }
  if (estimate.lines.size() < 4) state.SkipWithError("no lines");
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_InferenceMemoryEstimateIntoEveryCallNew);

// SizeInference's numbers without the texts, as the fit matrix and the
// runnable list size every model in four weight formats (bf16, fp8 and
// GGUF Q4_K_M sized tensor by tensor, GPTQ with its groups).
void BM_SizeInferenceNumbersOnly(benchmark::State& state) {
  InferenceMemoryInput input;
  input.parameters = 8030261248;
  input.architecture = Llama31_8B();
  const NumberFormat formats[] = {NumberFormat::kBf16, NumberFormat::kFp8, NumberFormat::kGgufQ4KM,
                                  NumberFormat::kGptqInt4};
  size_t next = 0;
  for (auto _ : state) {
    input.workload.weight_format = formats[next];
    if (++next == std::size(formats)) next = 0;
    absl::StatusOr<InferenceSizing> sizing = SizeInference(input);
    benchmark::DoNotOptimize(sizing);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SizeInferenceNumbersOnly);

void BM_CountParameters(benchmark::State& state) {
  const Architecture arch = Llama31_8B();
  for (auto _ : state) {
    auto count = CountParameters(arch);
    benchmark::DoNotOptimize(count);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CountParameters);

void BM_PlanOnDevice(benchmark::State& state) {
  PlanInput w;
  w.sizing.weight_bytes = 16060522496;
  w.sizing.kv_cache_bytes = 1073741824;
  w.sizing.activation_bytes = 44553216;
  w.sizing.overhead_bytes = 1073741824;
  w.sizing.parameters = 8030261248;
  w.sizing.num_attention_heads = 32;
  w.sizing.num_key_value_heads = 8;
  w.workload.prompt_tokens = 1000;
  DeviceSpec d;
  d.memory_bytes = 80.0 * (1 << 30);
  d.bandwidth_bytes_per_second = 3.35e12;
  d.peak_flops = 989.4e12;
  d.price_usd_per_hour = 4;
  for (auto _ : state) {
    auto plan = PlanOnDevice(w, d);
    benchmark::DoNotOptimize(plan);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PlanOnDevice);

// 3,000 models x 200 devices x 4 formats = 2.4 million cells per iteration.
void BM_FitMatrix(benchmark::State& state) {
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> exponent(8, 11.7);
  const int heads[] = {8, 12, 16, 32, 40, 64, 128};
  std::vector<InferenceSizing> models(3000);
  for (InferenceSizing& m : models) {
    m.parameters = std::pow(10.0, exponent(rng));
    m.active_share = rng() % 5 == 0 ? 0.25 : 1.0;
    m.kv_cache_bytes = m.parameters * 0.05;
    m.activation_bytes = 5e7;
    m.overhead_bytes = 1073741824.0;
    m.num_attention_heads = heads[rng() % 7];
    m.num_key_value_heads = std::max(1, m.num_attention_heads / 4);
  }
  struct Device {
    double usable_bytes = 0;
    double bandwidth_bytes_per_second = 0;
  };
  std::vector<Device> devices(200);
  for (size_t i = 0; i < devices.size(); ++i) {
    devices[i].usable_bytes = (8.0 + static_cast<double>(i % 24) * 8) * (1 << 30) * 0.9;
    devices[i].bandwidth_bytes_per_second = 3e11 + 4e10 * static_cast<double>(i);
  }
  const std::vector<double> bits = {16, 8, 4.156, 4.89};
  struct Cell {
    int16_t cards = 0;
    float decode_tokens_per_second = 0;
  };
  std::vector<Cell> cells(models.size() * devices.size() * bits.size());
  int64_t fitting = 0;
  for (auto _ : state) {
    // Every model x device x format, fitted the way ListRunnableModels fits
    // one column of it (FewestCards on the sizing, then the decode bound).
    fitting = 0;
    size_t index = 0;
    for (InferenceSizing m : models) {
      for (const Device& d : devices) {
        for (double b : bits) {
          Cell& cell = cells[index++];
          m.weight_bytes = m.parameters * b / 8;
          const int cards = FewestCards(m, d.usable_bytes, 64);
          cell.cards = static_cast<int16_t>(cards);
          cell.decode_tokens_per_second =
              cards == 0 ? 0
                         : static_cast<float>(DecodeStepsPerSecond(
                               d.bandwidth_bytes_per_second, cards, m.weight_bytes * m.active_share,
                               m.kv_cache_bytes));
          fitting += cards > 0;
        }
      }
    }
    benchmark::DoNotOptimize(cells.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(cells.size()));
  state.counters["fitting_cells"] = static_cast<double>(fitting);
}
BENCHMARK(BM_FitMatrix)->Unit(benchmark::kMillisecond);

// One training-memory estimate with its arithmetic (ZeRO-3, TP 2, selective).
void BM_TrainingMemoryEstimate(benchmark::State& state) {
  TrainingMemoryInput input;
  input.parameters = 8030261248;
  input.architecture = Architecture{.num_layers = 32,
                                    .hidden_size = 4096,
                                    .num_attention_heads = 32,
                                    .num_key_value_heads = 8,
                                    .head_dim = 128,
                                    .intermediate_size = 14336,
                                    .gated_mlp = true,
                                    .vocab_size = 128256};
  input.zero_stage = 3;
  input.data_parallel = 8;
  input.tensor_parallel = 2;
  input.sequence_parallel = true;
  input.recompute = Recompute::kSelective;
  for (auto _ : state) {
    auto memory = EstimateTrainingMemory(input);
    benchmark::DoNotOptimize(memory);
  }
}
BENCHMARK(BM_TrainingMemoryEstimate);

// Every figure of a training run (both methods, power, energy, cost).
void BM_TrainingRunFigures(benchmark::State& state) {
  TrainingRunInputs in;
  in.parameters = 7e9;
  in.dataset_tokens = 2e12;
  in.epochs = 1;
  in.chips = 512;
  in.training_hours = 720;
  in.peak_flops_per_chip = 989.4e12;
  in.tdp_watts = 700;
  in.fractional_year = 2025;
  in.price_usd_per_chip_hour = 2.5;
  for (auto _ : state) {
    auto run = ComputeTrainingRun(in);
    benchmark::DoNotOptimize(run);
  }
}
BENCHMARK(BM_TrainingRunFigures);

}  // namespace
}  // namespace modelatlas::estimator

BENCHMARK_MAIN();
