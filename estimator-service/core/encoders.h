// Parameters of a multimodal model's parts beside its language model: vision
// and audio encoders and the projectors into the language model's embeddings
// (docs/FORMULAS.md "Vision and audio parts"). Each layout follows the
// transformers module that holds the weights, so a count equals the
// checkpoint's tensors under that module:
//   clip_vision        CLIPVisionTransformer (modeling_clip.py)
//   siglip_vision      SiglipVisionTransformer (modeling_siglip.py)
//   llama4_vision      Llama4VisionModel with its pixel-shuffle adapter (modeling_llama4.py)
//   qwen2_vl_vision    Qwen2VisionTransformerPretrainedModel without its merger
//   qwen2_5_vl_vision  Qwen2_5_VisionTransformerPretrainedModel without its merger
//   qwen3_vl_vision    Qwen3.5's Qwen3_5VisionModel (Qwen3-VL's tower without
//                      deepstack) without its merger; max_positions learned positions
//   pixtral_vision     PixtralVisionModel (Mistral Small 3.1 and later's tower)
//   intern_vit         InternViT-300M (InternVisionModel, InternVLVisionModel)
//   siglip2_vision     Siglip2VisionTransformer (NaFlex: a linear patch embedding,
//                      max_positions learned positions; LFM2-VL's tower)
//   deepencoder        DeepSeek-OCR's DeepEncoder: SAM ViT-B as build_sam_vit_b builds
//                      it (fixed shapes) and CLIP-L (the part's figures) without a
//                      post-LayerNorm
//   moonvit            MoonViT (Kimi K2.5's tower: SigLIP's block, max_positions
//                      learned positions interpolated to each image)
//   glm4v_vision       Glm4vVisionModel (GLM-4.1V's ViT with its downsampling conv)
//   mllama_vision      MllamaVisionModel (Llama 3.2 Vision: local and gated global
//                      layers, tile and aspect-ratio position tables)
//   gemma4_vision      Gemma4VisionModel (unbiased attention with QK norms of head_dim,
//                      a gated MLP, four RMSNorms a block; a 2 x max_positions table)
//   gemma4_audio       Gemma4AudioModel (a conformer: subsampling convolutions, macaron
//                      MLPs, relative attention, a light convolution; output_proj)
//   whisper_encoder    WhisperEncoder / Qwen2AudioEncoder
//   llava_projector    LlavaMultiModalProjector (two biased linears)
//   llava_next_projector  the same and LLaVA-NeXT's image_newline vector
//   gemma3_projector   Gemma3MultiModalProjector (a matrix and an RMSNorm)
//   llama4_projector   Llama4MultiModalProjector (one linear without bias)
//   gemma4_projector   Gemma4MultimodalEmbedder (one linear without bias; a weightless norm)
//   qwen2_vl_merger, qwen2_5_vl_merger  PatchMerger (a norm and two biased linears)
//   qwen3_vl_merger    Qwen3VLVisionPatchMerger and num_layers deepstack mergers
//   mistral3_projector Mistral3MultiModalProjector (RMSNorm, patch merger, two linears)
//   internvl_projector InternVL's mlp1 (pixel unshuffle, a LayerNorm, two biased linears)
//   idefics3_connector Idefics3Connector (pixel shuffle, one linear without bias; SmolVLM)
//   deepseek_ocr_projector  one biased linear and image_newline, view_seperator
//   deepseek_vl2_projector  downsample_mlp_gelu: patch unfold, two biased linears, and
//                      image_newline, view_seperator
//   kimi_k25_projector Kimi K2.5's patch merger (a LayerNorm per patch, two biased linears)
//   lfm2_vl_projector  Lfm2VlMultiModalProjector (pixel unshuffle, a LayerNorm, two
//                      biased linears); lfm2_vl_projector_unnormed without the LayerNorm
//   phi3v_projector    Phi3ImageEmbedding (the HD transform's separators, two linears)
//   glm4v_merger       Glm4vVisionPatchMerger (a linear, a LayerNorm, a GLU)
//   minicpmv_resampler MiniCPM-V's Resampler (learned queries, a kv projection, one
//                      multi-head attention, three LayerNorms, an output matrix)
//   linear_projector   one biased linear (Qwen2AudioMultiModalProjector)
//   tensors            a count read from a file's tensors
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace modelatlas::estimator {

struct EncoderShape {
  std::string kind;    // "vision_encoder", "projector", "audio_encoder"
  std::string layout;  // see above
  int num_layers = 0;
  int64_t hidden_size = 0;        // elements
  int64_t intermediate_size = 0;  // elements
  int patch_size = 0;             // pixels
  int image_size = 0;             // pixels
  int num_channels = 3;
  int temporal_patch_size = 0;  // 0 = 2-D patches
  int spatial_merge_size = 0;
  int64_t output_size = 0;  // elements
  int num_mel_bins = 0;
  int max_positions = 0;
  bool pooling_head = false;
  int head_dim = 0;          // elements; gemma4_vision's q/k norms, gemma4_audio's head
  int conv_kernel_size = 0;  // tokens; gemma4_audio's depthwise convolution
  std::array<int, 2> subsampling_channels = {0, 0};  // gemma4_audio's two convolutions
  // mllama_vision: gated global layers after num_layers, tiles per image,
  // rows of the tile position tables.
  int num_global_layers = 0;
  int max_tiles = 0;
  int aspect_ratio_ids = 0;
  int num_queries = 0;    // minicpmv_resampler's learned queries
  double parameters = 0;  // layout "tensors"
};

struct EncoderCount {
  double parameters = 0;
  // Each term with its figures, e.g. "24 blocks x (4 x (1024^2 + 1024) ...".
  std::string arithmetic;
};

// INVALID_ARGUMENT naming `field`.<key> for an unknown layout or a missing
// or non-positive figure the layout needs.
absl::StatusOr<EncoderCount> CountEncoder(const EncoderShape& shape, const std::string& field);

// True for the kinds an answer itemizes.
bool IsEncoderKind(const std::string& kind);

}  // namespace modelatlas::estimator
