//! The Vision Transformer engine against Hugging Face transformers: fixtures made by
//! `scripts/vit/make_fixtures.py` (versions and seeds in that file) from small random models:
//! `vit` (`ViTForImageClassification`, the class token) and `deit`
//! (`DeiTForImageClassificationWithTeacher`, the class and distillation tokens, two heads
//! averaged). Every comparison runs in both CPU weight layouts: row-major, as natively, and
//! packed, as in the browser.

use crate::common::{floats, max_err};
use attention_live::formats::safetensors::SafeTensors;
use attention_live::model::RunError;
use attention_live::vit::weights::Weights;
use attention_live::vit::{Config, Options, Vit};
use ndarray::Array3;
use serde_json::Value;

/// Absolute tolerance: the engine sums in f32 in another order than PyTorch (a few ulps) and the
/// fixture keeps 7 significant digits; a real mistake (patches in the wrong order, the norm after
/// instead of before, a missing bias, the tanh GELU for the exact one) moves the numbers by 1e-2
/// or more.
const TOL: f32 = 1e-4;

const NAMES: [&str; 2] = ["vit", "deit"];

fn fixture(name: &str) -> (String, Vec<u8>, Value) {
    let d = format!("{}/tests/fixtures/vit/{name}", env!("CARGO_MANIFEST_DIR"));
    let reference = std::fs::read_to_string(format!("{d}/reference.json")).unwrap();
    (
        std::fs::read_to_string(format!("{d}/config.json")).unwrap(),
        std::fs::read(format!("{d}/model.safetensors")).unwrap(),
        serde_json::from_str(&reference).unwrap(),
    )
}

/// The fixture's model in each CPU layout, and its pixels (3, H, W).
fn models(name: &str) -> (Vec<Vit>, Array3<f32>, Value) {
    let (config, bytes, r) = fixture(name);
    let cfg = Config::from_json(&config).unwrap();
    let st = SafeTensors::parse(&bytes).unwrap();
    let models = [false, true]
        .map(|packed| Vit { config: cfg.clone(), weights: Weights::from_safetensors_in(&st, &cfg, packed).unwrap() })
        .into();
    let s = cfg.image_size;
    let pixels = Array3::from_shape_vec((3, s, s), floats(&r["pixel_values"])).unwrap();
    (models, pixels, r)
}

#[test]
fn hidden_states_attentions_and_logits_match_transformers() {
    for name in NAMES {
        let (models, pixels, r) = models(name);
        for m in models {
            let opts = Options { attentions: true, hidden_states: true, ..Default::default() };
            let out = m.forward(pixels.view(), &opts).unwrap();
            let hidden = out.hidden_states.iter().map(|h| h.as_slice().unwrap());
            crate::common::each_layer(hidden, &r["hidden_states"], &format!("{name}: hidden state"), TOL);
            let attentions = out.attentions.iter().map(|a| a.as_slice().unwrap());
            crate::common::each_layer(attentions, &r["attentions"], &format!("{name}: attention"), TOL);
            let err = max_err(out.logits.iter(), &floats(&r["logits"]));
            assert!(err < TOL, "{name}: logits differ by {err}");
        }
    }
}

/// One head knocked out, as the fixture's forward pre-hook zeroes its slice of the attention's
/// output projection's input: the logits move (by far more than the tolerance) and match.
#[test]
fn a_knocked_out_head_gives_transformers_logits() {
    for name in NAMES {
        let (models, pixels, r) = models(name);
        let k = &r["knock_out"];
        let at = (k["layer"].as_u64().unwrap() as usize, k["head"].as_u64().unwrap() as usize);
        let out = models[1].forward(pixels.view(), &Options { knock_out: vec![at], ..Default::default() }).unwrap();
        let want = floats(&k["logits"]);
        assert!(max_err(out.logits.iter(), &want) < TOL, "{name} {at:?}");
        assert!(max_err(floats(&r["logits"]).iter(), &want) > 100.0 * TOL, "{name} {at:?} changes the logits");
    }
}

/// Attention rollout against the fixture's (float64, from transformers' attentions), and the maps
/// over the grid against the rows they come from.
#[test]
fn attention_rollout_and_the_maps_over_the_patches() {
    use attention_live::vit::maps::{from_token, rollout, rollout_map};
    for name in NAMES {
        let (models, pixels, r) = models(name);
        let m = &models[0];
        let out = m.forward(pixels.view(), &Options { attentions: true, ..Default::default() }).unwrap();
        let roll = rollout(&out.attentions);
        assert!(max_err(roll.iter(), &floats(&r["rollout"])) < TOL, "{name}");
        let (extra, g) = (m.config.extra_tokens(), m.config.grid());
        // The class token's rollout over the 4 × 4 patches: row 0 past the extra tokens.
        let map = rollout_map(roll.view(), 0, extra, g).unwrap();
        assert_eq!(map.dim(), (g, g));
        assert_eq!(map[[1, 2]], roll[[0, extra + g + 2]]);
        // Head 1's weights from the last patch, and the heads' mean from the class token.
        let last = &out.attentions[1];
        let n = m.config.tokens();
        assert_eq!(from_token(last, n - 1, Some(1), extra, g).unwrap()[[3, 0]], last[[1, n - 1, extra + 3 * g]]);
        let mean = from_token(last, 0, None, extra, g).unwrap();
        // A token, head or grid the weights do not have: nothing, not a panic.
        assert!(from_token(last, n, None, extra, g).is_none() && from_token(last, 0, Some(9), extra, g).is_none());
        assert!(rollout_map(roll.view(), 0, extra, g + 1).is_none() && rollout_map(roll.view(), n, extra, g).is_none());
        let heads = m.config.num_attention_heads as f32;
        let want = (0..m.config.num_attention_heads).map(|h| last[[h, 0, extra + 5]]).sum::<f32>() / heads;
        assert!((mean[[1, 1]] - want).abs() < 1e-6);
    }
}

/// A drawn 45 × 37 picture through each checkpoint's image processor, as transformers' PIL
/// backend does it: resized (bilinear to 32 × 32; bicubic to 28 × 28, then cropped to 24 × 24),
/// rescaled and normalised. Pillow's fixed-point rounding is followed to the byte, so the pixels
/// agree to f32's rounding; one byte off would be 1/255/std ≈ 0.008.
#[test]
fn a_picture_is_preprocessed_as_the_image_processor_does_it() {
    use attention_live::vit::preprocess::Processor;
    for name in NAMES {
        let d = format!("{}/tests/fixtures/vit/{name}", env!("CARGO_MANIFEST_DIR"));
        let p =
            Processor::from_json(&std::fs::read_to_string(format!("{d}/preprocessor_config.json")).unwrap()).unwrap();
        let (_, _, r) = fixture(name);
        let img = &r["image"];
        let (h, w) = (img["height"].as_u64().unwrap() as usize, img["width"].as_u64().unwrap() as usize);
        let rgb: Vec<u8> = img["rgb"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u8).collect();
        let rgb = ndarray::Array3::from_shape_vec((h, w, 3), rgb).unwrap();
        let pixels = p.apply(rgb.view()).unwrap();
        let size = if name == "vit" { 32 } else { 24 };
        assert_eq!(pixels.dim(), (3, size, size), "{name}");
        assert_eq!(p.output_size((h, w)), (size, size));
        let err = max_err(pixels.iter(), &floats(&r["preprocessed"]));
        assert!(err < 1e-5, "{name}: the pixels differ by {err}");
        // A picture smaller than the crop once resized is refused with the reason.
        let small = Processor { resize: None, ..p.clone() };
        if name == "deit" {
            let e = small.apply(ndarray::Array3::zeros((10, 12, 3)).view()).unwrap_err();
            assert_eq!(e, "the picture is 12 × 10 after resizing, smaller than the crop of 24 × 24");
        }
    }
}

/// The bundled model (`scripts/vit/train_bundled.py`) on the shipped files: a few drawn pictures'
/// bytes through this engine's image processor and model give transformers' logits and the class
/// token's attention in the last layer, and so its answer; the card describes the shipped files.
#[test]
fn the_bundled_model_sees_drawn_shapes_as_transformers_does() {
    use attention_live::vit::preprocess::Processor;
    let root = env!("CARGO_MANIFEST_DIR");
    let dir = format!("{root}/static/models/shapes-vit");
    let read = |f: &str| std::fs::read(format!("{dir}/{f}")).unwrap();
    let text = |f: &str| String::from_utf8(read(f)).unwrap();
    let m = Vit::load(&text("config.json"), &read("model.safetensors")).unwrap();
    let p = Processor::from_json(&text("preprocessor_config.json")).unwrap();
    let path = format!("{root}/tests/fixtures/vit/shapes/reference.json");
    let cases: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    for case in cases.as_array().unwrap() {
        let rgb: Vec<u8> = case["rgb"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u8).collect();
        let pixels = p.apply(ndarray::Array3::from_shape_vec((32, 32, 3), rgb).unwrap().view()).unwrap();
        let out = m.forward(pixels.view(), &Options { attentions: true, ..Default::default() }).unwrap();
        let want = floats(&case["logits"]);
        assert!(max_err(out.logits.iter(), &want) < TOL, "{}", case["shape"]);
        let last = out.attentions.last().unwrap();
        let cls: Vec<f32> = last.outer_iter().flat_map(|h| h.row(0).to_vec()).collect();
        assert!(max_err(cls.iter(), &floats(&case["cls_attention_last_layer"])) < TOL);
        let best = |l: ndarray::ArrayView1<f32>| attention_live::numerics::softmax::argmax(l) as usize;
        assert_eq!(best(out.logits.view()), best(ndarray::ArrayView1::from(&want)), "{}", case["shape"]);
    }
    let card: Value = serde_json::from_slice(&read("card.json")).unwrap();
    assert_eq!(card["parameters"].as_u64().unwrap(), m.config.param_count().unwrap());
    assert_eq!(card["file_bytes"].as_u64().unwrap(), read("model.safetensors").len() as u64);
    assert!(card["file_bytes"].as_u64().unwrap() < 5_000_000, "at most 5 MB, as the book promises");
    assert_eq!(m.config.labels, ["circle", "square", "triangle", "star", "cross", "line"]);
}

#[test]
fn what_the_engine_does_not_run_is_refused_naming_the_field() {
    let (config, bytes, _) = fixture("vit");
    let cfg = Config::from_json(&config).unwrap();
    assert_eq!((cfg.tokens(), cfg.labels[4].as_str()), (17, "class 4"));
    let with = |key: &str, value: Value| {
        let mut v: Value = serde_json::from_str(&config).unwrap();
        v[key] = value;
        Config::from_json(&v.to_string()).map(|_| ()).unwrap_err().to_string()
    };
    assert!(with("model_type", "bert".into()).contains("this engine runs \"vit\" and \"deit\""));
    assert!(with("hidden_act", "tanh".into()).contains("hidden_act \"tanh\" is not supported"));
    assert!(with("image_size", 30.into()).contains("not a whole number of patches"));
    assert!(with("num_attention_heads", 3.into()).contains("not divisible"));
    // Another image size: the checkpoint's positions do not fit it, and are not interpolated.
    let mut v: Value = serde_json::from_str(&config).unwrap();
    v["image_size"] = 48.into();
    let e = Vit::load(&v.to_string(), &bytes).map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("holds 17 positions") && e.contains("makes 37 tokens"), "{e}");
    // An image of another shape is refused, saying both.
    let m = Vit::load(&config, &bytes).unwrap();
    let e = m.forward(Array3::zeros((3, 32, 24)).view(), &Options::default()).map(|_| ()).unwrap_err();
    assert_eq!(e, RunError::ImageShape { got: (3, 32, 24), want: (3, 32, 32) });
    assert_eq!(e.to_string(), "the image is 24 × 32 pixels with 3 channels, but the model takes 32 × 32 with 3");
}

/// The checkpoint loaded while it arrives, in chunks of any size (a download's), in both layouts:
/// the same model as the whole file gives, DeiT's distillation token and second head included;
/// and the whole file's refusals, before any weight is allocated.
#[test]
fn a_streamed_checkpoint_is_the_whole_files_model() {
    use attention_live::vit::stream::StreamLoader;
    for name in NAMES {
        let (models, pixels, _) = models(name);
        let (config, bytes, _) = fixture(name);
        for (packed, whole) in [false, true].into_iter().zip(&models) {
            let mut loader = StreamLoader::with_layout(&config, Some(bytes.len() as u64), packed).unwrap();
            for chunk in bytes.chunks(997) {
                loader.feed(chunk).unwrap();
            }
            let streamed = loader.finish().unwrap();
            let opts = Options::default();
            let (a, b) =
                (streamed.forward(pixels.view(), &opts).unwrap(), whole.forward(pixels.view(), &opts).unwrap());
            assert_eq!(a.logits, b.logits, "{name}, packed {packed}");
        }
        // One layer fewer in the config than in the file: refused as the whole file refuses it.
        let mut raw: Value = serde_json::from_str(&config).unwrap();
        let layers = raw["num_hidden_layers"].as_u64().unwrap();
        raw["num_hidden_layers"] = (layers - 1).into();
        let fewer = raw.to_string();
        let whole = Vit::load(&fewer, &bytes).err().unwrap().to_string();
        let mut loader = StreamLoader::with_layout(&fewer, None, true).unwrap();
        let streamed = bytes.chunks(4096).try_for_each(|c| loader.feed(c)).err().unwrap().to_string();
        assert_eq!(streamed, whole);
        let refusal = format!("num_hidden_layers = {} but the checkpoint has a layer {}", layers - 1, layers - 1);
        assert!(whole.contains(&refusal), "{whole}");
    }
}

/// The vision session on the DeiT fixture's drawn picture, given as a canvas gives it (RGBA): the
/// five likeliest classes are transformers' (softmax of the fixture's logits), the picture seen is
/// the preprocessed one with the normalisation undone, the answer survives the trip to the page,
/// a knocked-out head reports the prediction without it, and bad pictures are refused with the
/// reason.
#[test]
fn the_vision_session_answers_a_picture() {
    use attention_live::session::vision::{position_similarity, softmax, ClassifyQuery, Vision, VisionSession};
    let d = format!("{}/tests/fixtures/vit/deit", env!("CARGO_MANIFEST_DIR"));
    let (config, bytes, r) = fixture("deit");
    let pre = std::fs::read_to_string(format!("{d}/preprocessor_config.json")).unwrap();
    let s = VisionSession::load(&config, &bytes, &pre).unwrap();
    let img = &r["image"];
    let (h, w) = (img["height"].as_u64().unwrap() as usize, img["width"].as_u64().unwrap() as usize);
    let rgb: Vec<u8> = img["rgb"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u8).collect();
    let rgba: Vec<u8> = rgb.chunks(3).flat_map(|p| [p[0], p[1], p[2], 255]).collect();
    let q = ClassifyQuery { id: 7, width: w, height: h, knock_out: Vec::new() };
    let v = s.classify(&q, &rgba).unwrap();
    // The engine (matched to transformers above) on the fixture's preprocessed picture, which the
    // session must have made from the bytes (matched to the image processor above).
    let pixels = floats(&r["preprocessed"]);
    let input = Array3::from_shape_vec((3, 24, 24), pixels.clone()).unwrap();
    let run = |knock_out: Vec<(usize, usize)>| {
        softmax(&s.model.forward(input.view(), &Options { knock_out, ..Default::default() }).unwrap().logits)
    };
    let want = run(Vec::new());
    assert_eq!(v.top.len(), 5.min(want.len()));
    for (i, p) in v.top.iter().enumerate() {
        assert!((p.prob - want[p.index]).abs() < 1e-5, "{p:?}");
        assert!(i == 0 || v.top[i - 1].prob >= p.prob);
        assert_eq!(p.label, s.model.config.labels[p.index]);
    }
    let best = want.iter().enumerate().fold(0, |b, (i, &x)| if x > want[b] { i } else { b });
    assert_eq!(v.top[0].index, best);
    // The picture seen: 24 × 24 after the bicubic resize and the crop, back in bytes.
    assert_eq!(v.seen.dim(), (24, 24, 3));
    let (mean, std) = s.processor.normalize.unwrap();
    let byte = |c: usize, y: usize, x: usize| ((pixels[(c * 24 + y) * 24 + x] * std[c] + mean[c]) * 255.0).round();
    assert_eq!(f32::from(v.seen[[5, 9, 1]]), byte(1, 5, 9));
    assert_eq!(v.attentions.len(), s.model.config.num_hidden_layers);
    // Through the message and its buffer, and a buffer of the wrong length refused.
    let (m, data) = v.clone().into_parts();
    assert_eq!(Vision::from_parts(m.clone(), data.clone()).unwrap(), v);
    assert!(Vision::from_parts(m, data[1..].to_vec()).unwrap_err().contains("buffer holds"));
    // A head knocked out: the prediction moves, and the one without it is reported beside it.
    let k = &r["knock_out"];
    let at = (k["layer"].as_u64().unwrap() as usize, k["head"].as_u64().unwrap() as usize);
    let out = s.classify(&ClassifyQuery { knock_out: vec![at], ..q.clone() }, &rgba).unwrap();
    let plain = out.unablated.as_ref().unwrap();
    let ablated = run(vec![at]);
    assert!(ablated.iter().zip(&want).any(|(a, b)| (a - b).abs() > 1e-3), "the knock-out moves the prediction");
    for (p, u) in out.top.iter().zip(plain) {
        assert!((p.prob - ablated[p.index]).abs() < 1e-5 && (u.prob - want[u.index]).abs() < 1e-5);
    }
    // Refused, with the reason: too few bytes, no pixels, a head the model does not have.
    let short = s.classify(&q, &rgba[4..]).unwrap_err().to_string();
    assert_eq!(short, format!("a {w} × {h} picture has {} RGBA bytes, not {}", w * h * 4, w * h * 4 - 4));
    let empty = ClassifyQuery { width: 0, ..q.clone() };
    assert!(s.classify(&empty, &[]).unwrap_err().to_string().contains("at least one"));
    let bad = ClassifyQuery { knock_out: vec![(9, 0)], ..q.clone() };
    let e = pollster::block_on(s.answer(&bad, &rgba)).unwrap_err().to_string();
    assert_eq!(e, "layer 9, head 0 is not a head of this model: it has layers 0 to 2 and heads 0 to 1");
    // A processor that does not make the model's picture size is refused at load; so is a picture
    // that a resize to a shortest edge would make too long.
    use attention_live::vit::preprocess::{Processor, Size};
    let other = Processor { crop: Some((20, 20)), ..s.processor.clone() };
    let e = VisionSession::with_model(Vit::load(&config, &bytes).unwrap(), other).err().unwrap().to_string();
    assert!(e.contains("preprocessor_config.json makes pictures of 20 × 20, but the model reads 24 × 24"), "{e}");
    let edge = Processor {
        resize: Some((Size::ShortestEdge(24), attention_live::numerics::resample::Filter::Bilinear)),
        ..s.processor.clone()
    };
    let e = edge.apply(ndarray::Array3::zeros((2, 8000, 3)).view()).unwrap_err();
    assert!(e.contains("too thin"), "{e}");
    // The position embeddings' similarity: (grid², grid²), symmetric, 1 on the diagonal.
    let sim = position_similarity(&s.model);
    let g2 = s.model.config.grid().pow(2);
    assert_eq!(sim.dim(), (g2, g2));
    assert!((sim[[3, 3]] - 1.0).abs() < 1e-6 && (sim[[2, 7]] - sim[[7, 2]]).abs() < 1e-6, "{sim:?}");
    assert_eq!(s.info("t").positions.len(), g2 * g2);
}
