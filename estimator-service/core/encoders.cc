#include "estimator-service/core/encoders.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status/errors.h"

namespace modelatlas::estimator {
namespace {

std::string N(double v) { return absl::StrFormat("%.0f", v); }

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

}  // namespace

bool IsEncoderKind(const std::string& kind) {
  return kind == "vision_encoder" || kind == "projector" || kind == "audio_encoder";
}

absl::StatusOr<EncoderCount> CountEncoder(const EncoderShape& s, const std::string& field) {
  if (!IsEncoderKind(s.kind)) {
    return InvalidFieldError(absl::StrCat(field, ".kind"),
                             "must be vision_encoder, projector or audio_encoder");
  }
  FieldViolations missing;
  auto need = [&](double v, const char* key) {
    if (!(v > 0)) missing.Add(absl::StrCat(field, ".", key), "must be positive for this layout");
    return v;
  };
  const std::string& l = s.layout;
  EncoderCount out;
  if (l == "tensors") {
    out.parameters = need(s.parameters, "parameters");
    out.arithmetic = absl::StrCat(N(s.parameters), " parameters in the file's tensors");
  } else if (l == "clip_vision" || l == "siglip_vision") {
    const double h = need(static_cast<double>(s.hidden_size), "hidden_size");
    const double f = need(static_cast<double>(s.intermediate_size), "intermediate_size");
    const double p = need(s.patch_size, "patch_size");
    const double img = need(s.image_size, "image_size");
    const double layers = need(s.num_layers, "num_layers");
    const double c = need(s.num_channels, "num_channels");
    if (!missing.empty()) return missing.ToStatus();
    const double side = std::floor(img / p);
    const double patches = side * side;
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
    out.arithmetic = absl::StrCat(
        clip ? "CLIP" : "SigLIP", " ViT: ", N(layers), " blocks x ", block.Text(),
        " + patch embedding ", N(c), "x", N(p), "^2x", N(h), clip ? "" : " + bias", " = ", N(patch),
        " + ", N(patches + (clip ? 1 : 0)), " positions x ", N(h), " = ", N(positions),
        clip ? absl::StrCat(" + class token and pre/post LayerNorms ", N(extra))
             : absl::StrCat(" + post LayerNorm ", N(extra)),
        head > 0 ? absl::StrCat(" + attention-pooling head ", N(head)) : "", " = ",
        N(out.parameters));
  } else if (l == "llama4_vision") {
    const double h = need(static_cast<double>(s.hidden_size), "hidden_size");
    const double f = need(static_cast<double>(s.intermediate_size), "intermediate_size");
    const double p = need(s.patch_size, "patch_size");
    const double img = need(s.image_size, "image_size");
    const double layers = need(s.num_layers, "num_layers");
    const double c = need(s.num_channels, "num_channels");
    const double a = need(static_cast<double>(s.output_size), "output_size");
    if (!missing.empty()) return missing.ToStatus();
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
    const double h = need(static_cast<double>(s.hidden_size), "hidden_size");
    const double f = need(static_cast<double>(s.intermediate_size), "intermediate_size");
    const double p = need(s.patch_size, "patch_size");
    const double layers = need(s.num_layers, "num_layers");
    const double c = need(s.num_channels, "num_channels");
    if (!missing.empty()) return missing.ToStatus();
    const double t = std::max(1, s.temporal_patch_size);
    const bool v25 = l == "qwen2_5_vl_vision";
    const Block block{h, f, /*rms_norm=*/v25, /*gated=*/v25};
    const double patch = c * t * p * p * h;  // Conv3d without bias
    out.parameters = layers * block.Total() + patch;
    out.arithmetic =
        absl::StrCat(v25 ? "Qwen2.5-VL" : "Qwen2-VL", " ViT: ", N(layers), " blocks x ",
                     block.Text(), " + patch embedding ", N(c), "x", N(t), "x", N(p), "^2x", N(h),
                     " = ", N(patch), " = ", N(out.parameters));
  } else if (l == "qwen3_vl_vision") {
    const double h = need(static_cast<double>(s.hidden_size), "hidden_size");
    const double f = need(static_cast<double>(s.intermediate_size), "intermediate_size");
    const double p = need(s.patch_size, "patch_size");
    const double layers = need(s.num_layers, "num_layers");
    const double c = need(s.num_channels, "num_channels");
    const double pos = need(s.max_positions, "max_positions");
    if (!missing.empty()) return missing.ToStatus();
    const double t = std::max(1, s.temporal_patch_size);
    const Block block{h, f};
    const double patch = c * t * p * p * h + h;  // Conv3d with bias
    out.parameters = layers * block.Total() + patch + pos * h;
    out.arithmetic =
        absl::StrCat("Qwen3-VL ViT: ", N(layers), " blocks x ", block.Text(), " + patch embedding ",
                     N(c), "x", N(t), "x", N(p), "^2x", N(h), " + bias = ", N(patch), " + ", N(pos),
                     " positions x ", N(h), " = ", N(out.parameters));
  } else if (l == "whisper_encoder") {
    const double h = need(static_cast<double>(s.hidden_size), "hidden_size");
    const double f = need(static_cast<double>(s.intermediate_size), "intermediate_size");
    const double mel = need(s.num_mel_bins, "num_mel_bins");
    const double pos = need(s.max_positions, "max_positions");
    const double layers = need(s.num_layers, "num_layers");
    if (!missing.empty()) return missing.ToStatus();
    Block block{h, f};
    block.k_bias = false;  // WhisperAttention: k_proj has no bias
    const double convs = (mel * h * 3 + h) + (h * h * 3 + h);
    out.parameters = layers * block.Total() + convs + pos * h + 2 * h;
    out.arithmetic = absl::StrCat("Whisper-style encoder: ", N(layers), " blocks x ", block.Text(),
                                  " + two convolutions ", N(mel), "x", N(h), "x3 + ", N(h), "x",
                                  N(h), "x3 + biases = ", N(convs), " + ", N(pos), " positions x ",
                                  N(h), " + final LayerNorm = ", N(out.parameters));
  } else if (l == "llava_projector" || l == "linear_projector" || l == "gemma3_projector" ||
             l == "llama4_projector") {
    const double v = need(static_cast<double>(s.hidden_size), "hidden_size");
    const double t = need(static_cast<double>(s.output_size), "output_size");
    if (!missing.empty()) return missing.ToStatus();
    if (l == "llava_projector") {
      out.parameters = v * t + t + t * t + t;
      out.arithmetic = absl::StrCat("two linears ", N(v), "x", N(t), " + ", N(t), "x", N(t),
                                    " + biases = ", N(out.parameters));
    } else if (l == "llama4_projector") {
      out.parameters = v * t;
      out.arithmetic =
          absl::StrCat("a linear ", N(v), "x", N(t), " without bias = ", N(out.parameters));
    } else if (l == "linear_projector") {
      out.parameters = v * t + t;
      out.arithmetic = absl::StrCat("a linear ", N(v), "x", N(t), " + bias = ", N(out.parameters));
    } else {
      out.parameters = v * t + v;
      out.arithmetic = absl::StrCat("a projection ", N(v), "x", N(t), " + RMSNorm ", N(v), " = ",
                                    N(out.parameters));
    }
  } else if (l == "qwen2_vl_merger" || l == "qwen2_5_vl_merger") {
    const double h = need(static_cast<double>(s.hidden_size), "hidden_size");
    const double t = need(static_cast<double>(s.output_size), "output_size");
    const double m = need(s.spatial_merge_size, "spatial_merge_size");
    if (!missing.empty()) return missing.ToStatus();
    const double w = h * m * m;
    const double norm = l == "qwen2_vl_merger" ? 2 * h : h;  // LayerNorm or RMSNorm
    out.parameters = norm + w * w + w + w * t + t;
    out.arithmetic = absl::StrCat("patch merger: norm ", N(norm), " + linears ", N(w), "x", N(w),
                                  " + ", N(w), "x", N(t), " + biases (", N(m), "x", N(m),
                                  " patches of ", N(h), " merged) = ", N(out.parameters));
  } else {
    return InvalidFieldError(
        absl::StrCat(field, ".layout"),
        absl::StrCat("\"", l,
                     "\" is not a layout this estimator counts; supported: clip_vision, "
                     "siglip_vision, llama4_vision, qwen2_vl_vision, qwen2_5_vl_vision, "
                     "qwen3_vl_vision, "
                     "whisper_encoder, llava_projector, gemma3_projector, llama4_projector, "
                     "qwen2_vl_merger, qwen2_5_vl_merger, linear_projector, tensors"));
  }
  if (!missing.empty()) return missing.ToStatus();
  return out;
}

}  // namespace modelatlas::estimator
