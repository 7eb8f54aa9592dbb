//! The kit every demo's view is built from (wasm only): the context a view receives, controls,
//! canvas plots, matrix grids, number tables, the theme, browser glue and the compute worker's
//! client. It knows no demo.
pub mod browser;
pub mod controls;
pub mod ctx;
pub mod draw_pad;
pub mod image_maps;
pub mod link_box;
pub mod load_status;
pub mod matrix_canvas;
pub mod network;
pub mod picture;
pub mod plot;
pub mod probe;
pub mod seq2seq_models;
pub mod stored;
pub mod table;
pub mod theme;
pub mod worker;

pub use ctx::DemoCtx;
pub use table::{f4, number_table};
