#include "estimator-service/core/encoders.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "common/status/errors.h"

namespace modelatlas::estimator {
namespace {

std::string N(double v) { return absl::StrFormat("%.0f", v); }

// "2x2 patches of 1152": the m x m patches of width h a projector merges.
std::string MergedPatches(double m, double h) {
  return absl::StrCat(N(m), "x", N(m), " patches of ", N(h));
}

// A pre-norm transformer block with biased Q, K, V and output projections
// (K without bias in Whisper), two LayerNorms (2h each) or RMSNorms (h
// each), and a biased MLP: plain (fc1 h x f + f, fc2 f x h + h) or gated
// (gate and up h x f + f each, down f x h + h).
struct Block {
  double h = 0;
  double f = 0;
  bool rms_norm = false;
  bool gated = false;
  bool k_bias = true;
  double Attention() const { return 4 * h * h + (k_bias ? 4 : 3) * h; }
  double Norms() const { return rms_norm ? 2 * h : 4 * h; }
  double Mlp() const { return gated ? 3 * h * f + 2 * f + h : 2 * h * f + f + h; }
  double Total() const { return Attention() + Norms() + Mlp(); }
  std::string Text() const {
    return absl::StrCat("(attention 4x", N(h), "^2 + ", k_bias ? 4 : 3, "x", N(h),
                        " biases = ", N(Attention()), ", norms ", N(Norms()), ", MLP ",
                        gated ? "3x" : "2x", N(h), "x", N(f), " + biases = ", N(Mlp()),
                        ") = ", N(Total()));
  }
};

// DeepSeek-OCR's SAM ViT-B as its DeepEncoder builds it (build_sam_vit_b in
// deepencoder/sam_vary_sdpa.py; the config only documents it): 1024 px in
// patches of 16, 12 blocks of width 768 (12 heads of 64, MLP 3072) with
// relative positions per head dimension (windows of 14 but in every third
// block, which attends globally), a neck (a 1x1 conv to 256, LayerNorm2d, a
// 3x3 conv, LayerNorm2d) and two 3x3 convs without bias to 512 and 1024
// channels.
struct DeepEncoderSam {
  double h = 768, f = 3072, layers = 12, heads = 12, patch = 16, image = 1024, window = 14;
  double neck = 256, mid = 512, out = 1024;
  double Side() const { return image / patch; }
  double RelativePositions() const {
    const double head_dim = h / heads;
    const double global = layers / 3;
    return (layers - global) * 2 * (2 * window - 1) * head_dim +
           global * 2 * (2 * Side() - 1) * head_dim;
  }
  double Neck() const { return h * neck + 2 * neck + neck * neck * 9 + 2 * neck; }
  double Convs() const { return neck * mid * 9 + mid * out * 9; }
  double Total(double channels) const {
    return channels * patch * patch * h + h + Side() * Side() * h + layers * Block{h, f}.Total() +
           RelativePositions() + Neck() + Convs();
  }
  std::string Text(double channels) const {
    return absl::StrCat(
        "SAM ViT-B (as DeepEncoder builds it): patch embedding ", N(channels), "x", N(patch), "^2x",
        N(h), " + bias, ", N(Side() * Side()), " positions x ", N(h), ", ", N(layers), " blocks x ",
        Block{h, f}.Text(), ", relative positions ", N(RelativePositions()), ", neck ", N(Neck()),
        ", convs to ", N(mid), " and ", N(out), " ", N(Convs()), " = ", N(Total(channels)));
  }
};

// The figures each layout needs, checked once before it is counted (each
// must be positive); the order is the order violations are named in.
struct LayoutNeeds {
  absl::string_view layout;
  std::vector<absl::string_view> figures;
};
const std::vector<LayoutNeeds>& Layouts() {
  static const auto* const layouts = new std::vector<LayoutNeeds>{
      {"clip_vision",
       {"hidden_size", "intermediate_size", "patch_size", "image_size", "num_layers",
        "num_channels"}},
      {"siglip_vision",
       {"hidden_size", "intermediate_size", "patch_size", "image_size", "num_layers",
        "num_channels"}},
      {"llama4_vision",
       {"hidden_size", "intermediate_size", "patch_size", "image_size", "num_layers",
        "num_channels", "output_size"}},
      {"qwen2_vl_vision",
       {"hidden_size", "intermediate_size", "patch_size", "num_layers", "num_channels"}},
      {"glm4v_vision",
       {"hidden_size", "intermediate_size", "patch_size", "image_size", "num_layers",
        "num_channels", "output_size", "spatial_merge_size"}},
      {"mllama_vision",
       {"hidden_size", "intermediate_size", "patch_size", "image_size", "num_layers",
        "num_channels", "num_global_layers", "max_tiles", "aspect_ratio_ids"}},
      {"qwen2_5_vl_vision",
       {"hidden_size", "intermediate_size", "patch_size", "num_layers", "num_channels"}},
      {"qwen3_vl_vision",
       {"hidden_size", "intermediate_size", "patch_size", "num_layers", "num_channels",
        "max_positions"}},
      {"pixtral_vision",
       {"hidden_size", "intermediate_size", "patch_size", "num_layers", "num_channels"}},
      {"intern_vit",
       {"hidden_size", "intermediate_size", "patch_size", "image_size", "num_layers",
        "num_channels"}},
      {"siglip2_vision",
       {"hidden_size", "intermediate_size", "patch_size", "num_layers", "num_channels",
        "max_positions"}},
      {"deepencoder",
       {"hidden_size", "intermediate_size", "patch_size", "image_size", "num_layers",
        "num_channels"}},
      {"moonvit",
       {"hidden_size", "intermediate_size", "patch_size", "num_layers", "num_channels",
        "max_positions"}},
      {"gemma4_vision",
       {"hidden_size", "intermediate_size", "patch_size", "num_layers", "num_channels",
        "max_positions", "head_dim"}},
      {"gemma4_audio",
       {"hidden_size", "num_layers", "head_dim", "conv_kernel_size", "subsampling_channels",
        "output_size"}},
      {"whisper_encoder",
       {"hidden_size", "intermediate_size", "num_mel_bins", "max_positions", "num_layers"}},
      {"llava_projector", {"hidden_size", "output_size"}},
      {"llava_next_projector", {"hidden_size", "output_size"}},
      {"gemma3_projector", {"hidden_size", "output_size"}},
      {"llama4_projector", {"hidden_size", "output_size"}},
      {"gemma4_projector", {"hidden_size", "output_size"}},
      {"qwen2_vl_merger", {"hidden_size", "output_size", "spatial_merge_size"}},
      {"qwen2_5_vl_merger", {"hidden_size", "output_size", "spatial_merge_size"}},
      {"mistral3_projector", {"hidden_size", "output_size", "spatial_merge_size"}},
      {"qwen3_vl_merger", {"hidden_size", "output_size", "spatial_merge_size"}},
      {"internvl_projector", {"hidden_size", "output_size", "spatial_merge_size"}},
      {"idefics3_connector", {"hidden_size", "output_size", "spatial_merge_size"}},
      {"phi3v_projector", {"hidden_size", "output_size"}},
      {"glm4v_merger", {"hidden_size", "intermediate_size", "output_size"}},
      {"kimi_k25_projector", {"hidden_size", "output_size", "spatial_merge_size"}},
      {"deepseek_ocr_projector", {"hidden_size", "output_size"}},
      {"deepseek_vl2_projector", {"hidden_size", "output_size", "spatial_merge_size"}},
      {"lfm2_vl_projector",
       {"hidden_size", "intermediate_size", "output_size", "spatial_merge_size"}},
      {"lfm2_vl_projector_unnormed",
       {"hidden_size", "intermediate_size", "output_size", "spatial_merge_size"}},
      {"minicpmv_resampler", {"hidden_size", "output_size", "num_queries"}},
      {"linear_projector", {"hidden_size", "output_size"}},
      {"tensors", {"parameters"}},
  };
  return *layouts;
}

double FigureOf(const EncoderShape& s, absl::string_view key) {
  if (key == "hidden_size") return static_cast<double>(s.hidden_size);
  if (key == "intermediate_size") return static_cast<double>(s.intermediate_size);
  if (key == "patch_size") return s.patch_size;
  if (key == "image_size") return s.image_size;
  if (key == "num_layers") return s.num_layers;
  if (key == "num_channels") return s.num_channels;
  if (key == "output_size") return static_cast<double>(s.output_size);
  if (key == "num_mel_bins") return s.num_mel_bins;
  if (key == "max_positions") return s.max_positions;
  if (key == "spatial_merge_size") return s.spatial_merge_size;
  if (key == "head_dim") return s.head_dim;
  if (key == "num_global_layers") return s.num_global_layers;
  if (key == "max_tiles") return s.max_tiles;
  if (key == "aspect_ratio_ids") return s.aspect_ratio_ids;
  if (key == "num_queries") return s.num_queries;
  if (key == "conv_kernel_size") return s.conv_kernel_size;
  if (key == "subsampling_channels") {
    return std::min(s.subsampling_channels[0], s.subsampling_channels[1]);
  }
  return s.parameters;  // "parameters"
}

// INVALID_ARGUMENT naming the layout field for a layout not in Layouts(),
// or every figure the layout needs that is not positive.
absl::Status CheckLayoutFigures(const EncoderShape& s, const std::string& field) {
  const auto& layouts = Layouts();
  const auto it = std::find_if(layouts.begin(), layouts.end(),
                               [&s](const LayoutNeeds& l) { return l.layout == s.layout; });
  if (it == layouts.end()) {
    std::vector<absl::string_view> names;
    for (const LayoutNeeds& l : layouts) names.push_back(l.layout);
    return InvalidFieldError(
        absl::StrCat(field, ".layout"),
        absl::StrCat("\"", s.layout, "\" is not a layout this estimator counts; supported: ",
                     absl::StrJoin(names, ", ")));
  }
  FieldViolations missing;
  for (absl::string_view key : it->figures) {
    if (!(FigureOf(s, key) > 0)) {
      missing.Add(absl::StrCat(field, ".", key), "must be positive for this layout");
    }
  }
  return missing.ToStatus();
}

}  // namespace

bool IsEncoderKind(const std::string& kind) {
  return kind == "vision_encoder" || kind == "projector" || kind == "audio_encoder";
}

absl::StatusOr<EncoderCount> CountEncoder(const EncoderShape& s, const std::string& field) {
  if (!IsEncoderKind(s.kind)) {
    return InvalidFieldError(absl::StrCat(field, ".kind"),
                             "must be vision_encoder, projector or audio_encoder");
  }
  if (absl::Status figures = CheckLayoutFigures(s, field); !figures.ok()) return figures;
  const std::string& l = s.layout;
  // The figures the layouts read (CheckLayoutFigures checked those each
  // needs).
  const double h = static_cast<double>(s.hidden_size);
  const double f = static_cast<double>(s.intermediate_size);
  const double t = static_cast<double>(s.output_size);
  const double p = s.patch_size, img = s.image_size, layers = s.num_layers, c = s.num_channels,
               m = s.spatial_merge_size, pos = s.max_positions, mel = s.num_mel_bins;
  EncoderCount out;
  if (l == "tensors") {
    out.parameters = s.parameters;
    out.arithmetic = absl::StrCat(N(s.parameters), " parameters in the file's tensors");
  } else if (l == "clip_vision" || l == "siglip_vision" || l == "siglip2_vision" ||
             l == "moonvit") {
    // SigLIP2's NaFlex tower keeps a table of max_positions (num_patches)
    // positions, resized to each image, and embeds patches with a biased
    // linear of the conv's size. MoonViT (Kimi K2.5) is SigLIP's block with
    // a biased patch conv and a table of max_positions (64 x 64) positions
    // interpolated to each image, and a final LayerNorm.
    const bool table_positions = l == "siglip2_vision" || l == "moonvit";
    const double side = std::floor(img / p);
    const double patches = table_positions ? pos : side * side;
    const bool clip = l == "clip_vision";
    const Block block{h, f};
    // CLIP: patch conv without bias, a class token, (patches + 1) positions,
    // pre- and post-LayerNorm. SigLIP: patch conv with bias, patches
    // positions, post-LayerNorm; optionally its attention-pooling head.
    const double patch = c * p * p * h + (clip ? 0 : h);
    const double positions = (patches + (clip ? 1 : 0)) * h;
    const double extra = clip ? h + 4 * h : 2 * h;
    double head = 0;
    if (!clip && s.pooling_head) head = h + (4 * h * h + 4 * h) + 2 * h + block.Mlp();
    out.parameters = layers * block.Total() + patch + positions + extra + head;
    out.arithmetic =
        absl::StrCat(clip              ? "CLIP ViT"
                     : l == "moonvit"  ? "MoonViT"
                     : table_positions ? "SigLIP2 NaFlex ViT"
                                       : "SigLIP ViT",
                     ": ", N(layers), " blocks x ", block.Text(), " + patch embedding ", N(c), "x",
                     N(p), "^2x", N(h), clip ? "" : " + bias", " = ", N(patch), " + ",
                     N(patches + (clip ? 1 : 0)), " positions x ", N(h), " = ", N(positions),
                     clip ? absl::StrCat(" + class token and pre/post LayerNorms ", N(extra))
                          : absl::StrCat(" + post LayerNorm ", N(extra)),
                     head > 0 ? absl::StrCat(" + attention-pooling head ", N(head)) : "", " = ",
                     N(out.parameters));
  } else if (l == "deepencoder") {
    const DeepEncoderSam sam;
    const double sam_total = sam.Total(c);
    // Its CLIP-L (build_clip_l): CLIP's embeddings (a class token, a patch
    // conv without bias, patches + 1 positions) and pre_layrnorm; no
    // post-LayerNorm.
    const double side = std::floor(img / p);
    const Block block{h, f};
    const double clip_embeddings = h + c * p * p * h + (side * side + 1) * h + 2 * h;
    const double clip_total = layers * block.Total() + clip_embeddings;
    out.parameters = sam_total + clip_total;
    out.arithmetic =
        absl::StrCat(sam.Text(c), " + CLIP-L: ", N(layers), " blocks x ", block.Text(),
                     " + class token, patch embedding ", N(c), "x", N(p), "^2x", N(h), ", ",
                     N(side * side + 1), " positions and pre-LayerNorm = ", N(clip_embeddings),
                     " = ", N(clip_total), "; together ", N(out.parameters));
  } else if (l == "intern_vit") {
    // InternViT-300M (InternVisionModel; transformers' InternVLVisionModel):
    // CLIP's block (a fused qkv with biases, LayerNorms) plus the two
    // layer-scale vectors ls1, ls2; a class token, a biased patch conv,
    // (patches + 1) positions; no final norm.
    const double side = std::floor(img / p);
    const Block block{h, f};
    const double layer = block.Total() + 2 * h;
    const double embeddings = h + c * p * p * h + h + (side * side + 1) * h;
    out.parameters = layers * layer + embeddings;
    out.arithmetic = absl::StrCat(
        "InternViT: ", N(layers), " blocks x (", block.Text(), " + layer scales 2x", N(h), " = ",
        N(layer), ") + class token, patch embedding ", N(c), "x", N(p), "^2x", N(h), " + bias and ",
        N(side * side + 1), " positions x ", N(h), " = ", N(embeddings), " = ", N(out.parameters));
  } else if (l == "llama4_vision") {
    const double a = t;
    const double side = std::floor(img / p);
    const Block block{h, f};
    // Llama4VisionModel: patch_embedding without bias, a class token,
    // (patches + 1) positions, pre- and post-LayerNorm; its pixel-shuffle
    // adapter's two unbiased linears (fc1 f x a, fc2 a x a).
    const double patch = c * p * p * h;
    const double positions = (side * side + 1) * h;
    const double extra = h + 4 * h;
    const double adapter = f * a + a * a;
    out.parameters = layers * block.Total() + patch + positions + extra + adapter;
    out.arithmetic = absl::StrCat("Llama 4 ViT: ", N(layers), " blocks x ", block.Text(),
                                  " + patch embedding ", N(c), "x", N(p), "^2x", N(h), " = ",
                                  N(patch), " + ", N(side * side + 1), " positions x ", N(h), " = ",
                                  N(positions), " + class token and pre/post LayerNorms ", N(extra),
                                  " + pixel-shuffle adapter ", N(f), "x", N(a), " + ", N(a), "x",
                                  N(a), " = ", N(adapter), " = ", N(out.parameters));
  } else if (l == "qwen2_vl_vision" || l == "qwen2_5_vl_vision") {
    const double frames = std::max(1, s.temporal_patch_size);
    const bool v25 = l == "qwen2_5_vl_vision";
    const Block block{h, f, /*rms_norm=*/v25, /*gated=*/v25};
    const double patch = c * frames * p * p * h;  // Conv3d without bias
    out.parameters = layers * block.Total() + patch;
    out.arithmetic =
        absl::StrCat(v25 ? "Qwen2.5-VL" : "Qwen2-VL", " ViT: ", N(layers), " blocks x ",
                     block.Text(), " + patch embedding ", N(c), "x", N(frames), "x", N(p), "^2x",
                     N(h), " = ", N(patch), " = ", N(out.parameters));
  } else if (l == "glm4v_vision") {
    // Glm4vVisionModel (transformers models/glm4v): a Conv3d patch embedding
    // with bias, a table of (image / p)^2 positions resized to each image,
    // an RMSNorm after the conv; blocks of two RMSNorms, an unbiased qkv and
    // proj and an unbiased GLU MLP of f (= out_hidden_size); a final
    // RMSNorm; the downsampling Conv2d (m x m, with bias) into t.
    const double frames = std::max(1, s.temporal_patch_size);
    const double side = std::floor(img / p);
    const double patch = c * frames * p * p * h + h;
    const double block = 2 * h + 4 * h * h + 3 * h * f;
    const double downsample = h * t * m * m + t;
    out.parameters = side * side * h + patch + h + layers * block + h + downsample;
    out.arithmetic = absl::StrCat(
        "GLM-4V ViT: ", N(layers), " blocks x (RMSNorms ", N(2 * h), " + attention 4x", N(h),
        "^2 + GLU MLP 3x", N(h), "x", N(f), " = ", N(block), ") + patch embedding ", N(c), "x",
        N(frames), "x", N(p), "^2x", N(h), " + bias = ", N(patch), " + ", N(side * side),
        " positions x ", N(h), " + 2 RMSNorms ", N(2 * h), " + downsampling conv ", N(h), "x", N(t),
        "x", N(m), "^2 + bias = ", N(downsample), " = ", N(out.parameters));
  } else if (l == "mllama_vision") {
    // MllamaVisionModel (transformers models/mllama): a patch conv without
    // bias, a class token; a gated table of (image / p)^2 + 1 positions and
    // a tile table of (ratios x tiles x positions x h); gated pre- and
    // post-tile tables (ratios x tiles x h); pre and post LayerNorms; local
    // layers and gated global ones (gate_attn, gate_ffn), each with
    // unbiased q/k/v/o, two LayerNorms and a biased plain MLP.
    const double positions = std::floor(img / p) * std::floor(img / p) + 1;
    const double tiles = s.max_tiles, ratios = s.aspect_ratio_ids, global = s.num_global_layers;
    const double block = 4 * h * h + 4 * h + 2 * h * f + f + h;
    const double patch = c * p * p * h;
    const double position_tables = positions * h + 1 + ratios * tiles * positions * h;
    const double tile_tables = 2 * (ratios * tiles * h + 1);
    out.parameters =
        patch + h + position_tables + tile_tables + 4 * h + (layers + global) * block + 2 * global;
    out.arithmetic = absl::StrCat(
        "Mllama ViT: ", N(layers), " local + ", N(global), " global layers x (attention 4x", N(h),
        "^2 + LayerNorms 4x", N(h), " + MLP 2x", N(h), "x", N(f), " + biases = ", N(block),
        ") + 2x", N(global), " gates + patch embedding ", N(c), "x", N(p), "^2x", N(h), " = ",
        N(patch), " + class token ", N(h), " + ", N(positions), " positions x ", N(h),
        " + gate + tile positions ", N(ratios), " ratios x ", N(tiles), " tiles x ", N(positions),
        " x ", N(h), " = ", N(position_tables), " + pre/post tile tables 2x(", N(ratios), "x",
        N(tiles), "x", N(h), " + gate) = ", N(tile_tables), " + pre/post LayerNorms ", N(4 * h),
        " = ", N(out.parameters));
  } else if (l == "qwen3_vl_vision") {
    const double frames = std::max(1, s.temporal_patch_size);
    const Block block{h, f};
    const double patch = c * frames * p * p * h + h;  // Conv3d with bias
    out.parameters = layers * block.Total() + patch + pos * h;
    out.arithmetic =
        absl::StrCat("Qwen3-VL ViT: ", N(layers), " blocks x ", block.Text(), " + patch embedding ",
                     N(c), "x", N(frames), "x", N(p), "^2x", N(h), " + bias = ", N(patch), " + ",
                     N(pos), " positions x ", N(h), " = ", N(out.parameters));
  } else if (l == "pixtral_vision") {
    // PixtralVisionModel: patch_conv without bias, ln_pre (RMSNorm), blocks
    // of unbiased q/k/v/o, a gated MLP without biases (gate, up, down) and
    // two RMSNorms; 2-D rotary positions, so no position table.
    const double block = 4 * h * h + 3 * h * f + 2 * h;
    const double patch = c * p * p * h;
    out.parameters = layers * block + patch + h;
    out.arithmetic = absl::StrCat(
        "Pixtral ViT: ", N(layers), " blocks x (attention 4x", N(h), "^2 + gated MLP 3x", N(h), "x",
        N(f), " + RMSNorms 2x", N(h), " = ", N(block), ") + patch embedding ", N(c), "x", N(p),
        "^2x", N(h), " = ", N(patch), " + ln_pre ", N(h), " = ", N(out.parameters));
  } else if (l == "gemma4_vision") {
    // Gemma4VisionModel (modeling_gemma4.py): input_proj, a linear of the
    // patch without bias; a position table of 2 axes x max_positions
    // (position_embedding_size) x h; blocks of unbiased q/k/v/o (heads x
    // head_dim = h; the reader checks), q_norm and k_norm of head_dim, a
    // gated MLP without biases and four RMSNorms; no final norm. Its
    // standardization buffers (std_bias, std_scale) are not parameters.
    const double hd = s.head_dim;
    const double block = 4 * h * h + 2 * hd + 3 * h * f + 4 * h;
    const double patch = c * p * p * h;
    const double positions = 2 * pos * h;
    out.parameters = layers * block + patch + positions;
    out.arithmetic = absl::StrCat(
        "Gemma 4 ViT: ", N(layers), " blocks x (attention 4x", N(h), "^2 + QK norms 2x", N(hd),
        " + gated MLP 3x", N(h), "x", N(f), " + RMSNorms 4x", N(h), " = ", N(block),
        ") + patch embedding ", N(c), "x", N(p), "^2x", N(h), " = ", N(patch), " + 2 axes x ",
        N(pos), " positions x ", N(h), " = ", N(positions), " = ", N(out.parameters));
  } else if (l == "gemma4_audio") {
    // Gemma4AudioModel (modeling_gemma4.py), a conformer: two 3x3
    // subsampling convolutions without bias (1 -> c0 -> c1 channels, each
    // with a LayerNorm weight), input_proj_linear (c0 / 4) x c1 -> h; per
    // block two macaron MLPs (h -> 4h -> h, pre and post norms), q/k/v,
    // post and relative_k_proj h x h with a per-dimension scale of the
    // head, a light convolution (linear_start h -> 2h, a depthwise kernel,
    // linear_end, two norms) and three norms; output_proj h -> output with
    // a bias. No biases elsewhere; its clipping bounds are scalars, not
    // parameters.
    const double c0 = s.subsampling_channels[0], c1 = s.subsampling_channels[1];
    const double hd = s.head_dim, k = s.conv_kernel_size;
    const double subsample = 9 * c0 + c0 + 9 * c0 * c1 + c1 + std::floor(c0 / 4) * c1 * h;
    const double block = 24 * h * h + 9 * h + hd + h * k;
    const double output = h * t + t;
    out.parameters = subsample + layers * block + output;
    out.arithmetic = absl::StrCat(
        "Gemma 4 audio conformer: subsampling convolutions 9x", N(c0), " + 9x", N(c0), "x", N(c1),
        " + norms ", N(c0 + c1), " + input projection ", N(std::floor(c0 / 4) * c1), "x", N(h),
        " = ", N(subsample), " + ", N(layers), " blocks x (two MLPs 2x(2x4x", N(h), "^2 + norms 2x",
        N(h), ") + attention 5x", N(h), "^2 + scale ", N(hd), " + light convolution 3x", N(h),
        "^2 + ", N(h), "x", N(k), " + norms 2x", N(h), " + norms 3x", N(h), " = ", N(block),
        ") + output projection ", N(h), "x", N(t), " + bias = ", N(out.parameters));
  } else if (l == "whisper_encoder") {
    Block block{h, f};
    block.k_bias = false;  // WhisperAttention: k_proj has no bias
    const double convs = (mel * h * 3 + h) + (h * h * 3 + h);
    out.parameters = layers * block.Total() + convs + pos * h + 2 * h;
    out.arithmetic = absl::StrCat("Whisper-style encoder: ", N(layers), " blocks x ", block.Text(),
                                  " + two convolutions ", N(mel), "x", N(h), "x3 + ", N(h), "x",
                                  N(h), "x3 + biases = ", N(convs), " + ", N(pos), " positions x ",
                                  N(h), " + final LayerNorm = ", N(out.parameters));
  } else if (l == "llava_projector" || l == "llava_next_projector" || l == "linear_projector" ||
             l == "gemma3_projector" || l == "llama4_projector" || l == "gemma4_projector") {
    const double v = h;
    if (l == "llava_projector" || l == "llava_next_projector") {
      // LLaVA-NeXT adds image_newline, one vector of the text width.
      const bool newline = l == "llava_next_projector";
      out.parameters = v * t + t + t * t + t + (newline ? t : 0);
      out.arithmetic = absl::StrCat(
          "two linears ", N(v), "x", N(t), " + ", N(t), "x", N(t), " + biases",
          newline ? absl::StrCat(" + image_newline ", N(t)) : "", " = ", N(out.parameters));
    } else if (l == "llama4_projector" || l == "gemma4_projector") {
      // Gemma4MultimodalEmbedder: its pre-projection RMSNorm has no weight.
      out.parameters = v * t;
      out.arithmetic = absl::StrCat("a linear ", N(v), "x", N(t), " without bias",
                                    l == "gemma4_projector" ? " (its RMSNorm has no weight)" : "",
                                    " = ", N(out.parameters));
    } else if (l == "linear_projector") {
      out.parameters = v * t + t;
      out.arithmetic = absl::StrCat("a linear ", N(v), "x", N(t), " + bias = ", N(out.parameters));
    } else {
      out.parameters = v * t + v;
      out.arithmetic = absl::StrCat("a projection ", N(v), "x", N(t), " + RMSNorm ", N(v), " = ",
                                    N(out.parameters));
    }
  } else if (l == "minicpmv_resampler") {
    // MiniCPM-V's Resampler (resampler.py, remote code): query (queries x
    // t), kv_proj (h x t, no bias), attn (nn.MultiheadAttention of width t:
    // in_proj 3t^2 + 3t, out_proj t^2 + t), ln_q, ln_kv and ln_post
    // (LayerNorms of t), proj (t x t, a matrix without bias); its 2-D
    // sin-cos pos_embed is a buffer, not a parameter.
    const double q = s.num_queries;
    out.parameters = q * t + h * t + 5 * t * t + 10 * t;
    out.arithmetic =
        absl::StrCat("resampler: ", N(q), " queries x ", N(t), " + kv projection ", N(h), "x", N(t),
                     " + attention 4x", N(t), "^2 + biases 4x", N(t), " + LayerNorms 3x2x", N(t),
                     " + output matrix ", N(t), "x", N(t), " = ", N(out.parameters));
  } else if (l == "qwen3_vl_merger") {
    const double deepstack = std::max(0, s.num_layers);
    // Qwen3VLVisionPatchMerger: a LayerNorm over h, then linears w x w and
    // w x t with biases (w = h x m^2); each deepstack merger
    // (use_postshuffle_norm) the same with its LayerNorm over w.
    const double w = h * m * m;
    const double linears = w * w + w + w * t + t;
    const double main = 2 * h + linears;
    const double each = 2 * w + linears;
    out.parameters = main + deepstack * each;
    out.arithmetic = absl::StrCat("patch merger: LayerNorm ", N(2 * h), " + linears ", N(w), "x",
                                  N(w), " + ", N(w), "x", N(t), " + biases = ", N(main), " + ",
                                  N(deepstack), " deepstack mergers x (LayerNorm ", N(2 * w),
                                  " + the same linears) = ", N(out.parameters));
  } else if (l == "mistral3_projector") {
    const double v = h;
    // Mistral3MultiModalProjector: an RMSNorm, the patch merger's unbiased
    // merging_layer (m x m patches of v into v), linear_1 and linear_2
    // without bias (multimodal_projector_bias false; a config with biases
    // is refused by the reader).
    const double merging = v * m * m * v;
    out.parameters = v + merging + v * t + t * t;
    out.arithmetic = absl::StrCat("RMSNorm ", N(v), " + patch merger ", N(v * m * m), "x", N(v),
                                  " (", N(m), "x", N(m), " patches) + linears ", N(v), "x", N(t),
                                  " + ", N(t), "x", N(t), " = ", N(out.parameters));
  } else if (l == "internvl_projector") {
    // InternVL's mlp1 (InternVLMultiModalProjector): m x m patches of h
    // unshuffled into w = h x m^2 (m = 1 / downsample_ratio), a LayerNorm
    // over w, linears w x t and t x t, all with biases.
    const double w = h * m * m;
    out.parameters = 2 * w + w * t + t + t * t + t;
    out.arithmetic =
        absl::StrCat("LayerNorm ", N(2 * w), " + linears ", N(w), "x", N(t), " + ", N(t), "x", N(t),
                     " + biases (", MergedPatches(m, h), " unshuffled) = ", N(out.parameters));
  } else if (l == "idefics3_connector") {
    // Idefics3Connector (SmolVLM's too): m x m patches of h pixel-shuffled
    // into w = h x m^2 (m = scale_factor), then modality_projection.proj, one
    // linear w x t without bias.
    const double w = h * m * m;
    out.parameters = w * t;
    out.arithmetic = absl::StrCat("a linear ", N(w), "x", N(t), " without bias (",
                                  MergedPatches(m, h), " pixel-shuffled) = ", N(out.parameters));
  } else if (l == "phi3v_projector") {
    // Phi3ImageEmbedding: the HD transform's 2 x 2 patches of h (w = 4h),
    // the separators glb_GN and sub_GN (w each), then img_projection's
    // linears w x t and t x t with biases.
    const double w = 4 * h;
    out.parameters = 2 * w + w * t + t + t * t + t;
    out.arithmetic = absl::StrCat("separators glb_GN and sub_GN 2x", N(w), " + linears ", N(w), "x",
                                  N(t), " + ", N(t), "x", N(t), " + biases (2x2 patches of ", N(h),
                                  ") = ", N(out.parameters));
  } else if (l == "glm4v_merger") {
    // Glm4vVisionPatchMerger: proj h x h, a LayerNorm, gate and up h x f,
    // down f x h, no biases (h = the tower's out_hidden_size = t).
    out.parameters = h * h + 2 * h + 3 * h * f;
    out.arithmetic = absl::StrCat("patch merger: a linear ", N(h), "x", N(h), " + LayerNorm ",
                                  N(2 * h), " + GLU 3x", N(h), "x", N(f), " = ", N(out.parameters));
  } else if (l == "deepseek_ocr_projector") {
    // MlpProjector "linear" (SAM's and CLIP's features side by side, h =
    // input_dim) and the two learned vectors image_newline and
    // view_seperator (sic) of the text width.
    out.parameters = h * t + t + 2 * t;
    out.arithmetic =
        absl::StrCat("a linear ", N(h), "x", N(t), " + bias + image_newline and view_seperator 2x",
                     N(t), " = ", N(out.parameters));
  } else if (l == "deepseek_vl2_projector") {
    // MlpProjector "downsample_mlp_gelu" (depth 2, mlp_ratio 1): m x m
    // patches of h unfolded into w = h x m^2, linears w x t and t x t with
    // biases; image_newline and view_seperator of the text width.
    const double w = h * m * m;
    out.parameters = w * t + t + t * t + t + 2 * t;
    out.arithmetic = absl::StrCat(
        "linears ", N(w), "x", N(t), " + ", N(t), "x", N(t), " + biases (", MergedPatches(m, h),
        ") + image_newline and view_seperator 2x", N(t), " = ", N(out.parameters));
  } else if (l == "kimi_k25_projector") {
    // Kimi K2.5's patch merger (mm_projector "patchmerger"): a LayerNorm
    // over each patch of h, m x m patches merged into w = h x m^2, linears
    // w x w and w x t with biases.
    const double w = h * m * m;
    out.parameters = 2 * h + w * w + w + w * t + t;
    out.arithmetic =
        absl::StrCat("LayerNorm ", N(2 * h), " + linears ", N(w), "x", N(w), " + ", N(w), "x", N(t),
                     " + biases (", MergedPatches(m, h), " merged) = ", N(out.parameters));
  } else if (l == "lfm2_vl_projector" || l == "lfm2_vl_projector_unnormed") {
    // Lfm2VlMultiModalProjector: m x m patches of h unshuffled into w = h x
    // m^2, a LayerNorm over w (projector_use_layernorm), linear_1 w x i and
    // linear_2 i x t, both biased.
    const double w = h * m * m;
    const double norm = l == "lfm2_vl_projector" ? 2 * w : 0;
    out.parameters = norm + w * f + f + f * t + t;
    out.arithmetic =
        absl::StrCat(norm > 0 ? absl::StrCat("LayerNorm ", N(norm), " + ") : "no LayerNorm; ",
                     "linears ", N(w), "x", N(f), " + ", N(f), "x", N(t), " + biases (",
                     MergedPatches(m, h), " unshuffled) = ", N(out.parameters));
  } else if (l == "qwen2_vl_merger" || l == "qwen2_5_vl_merger") {
    const double w = h * m * m;
    const double norm = l == "qwen2_vl_merger" ? 2 * h : h;  // LayerNorm or RMSNorm
    out.parameters = norm + w * w + w + w * t + t;
    out.arithmetic = absl::StrCat("patch merger: norm ", N(norm), " + linears ", N(w), "x", N(w),
                                  " + ", N(w), "x", N(t), " + biases (", MergedPatches(m, h),
                                  " merged) = ", N(out.parameters));
  } else {
    // Unreachable: CheckLayoutFigures refuses a layout not in Layouts().
    return absl::InternalError(absl::StrCat("layout ", l, " is listed but not counted"));
  }
  return out;
}

}  // namespace modelatlas::estimator
