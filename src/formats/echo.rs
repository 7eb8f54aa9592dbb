//! Text from outside the book (a reader's answer, a prompt, a name from a file) quoted inside the
//! book's own sentences, so that it can neither reorder them nor hide what it is.

/// Text from the reader (an answer, a prompt, a file's name for a token), quoted for a message:
/// “…”, the inside wrapped in a first-strong isolate (U+2068 … U+2069), so that direction marks
/// in it cannot reorder the sentence around it, and every character that would not show as
/// itself (controls, direction marks, zero-width and other invisible characters, whitespace other
/// than the space, combining marks) written as its code point, "U+202E".
pub fn echo(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 12);
    out.push_str("“\u{2068}");
    for c in text.chars() {
        push_visible(&mut out, c);
    }
    out.push_str("\u{2069}”");
    out
}

/// One character from the reader: quoted as by [`echo`], or only its code point ("U+202E")
/// when it would not show as itself.
pub fn echo_char(c: char) -> String {
    if hidden(c) {
        format!("U+{:04X}", c as u32)
    } else {
        echo(c.encode_utf8(&mut [0; 4]))
    }
}

fn push_visible(out: &mut String, c: char) {
    if hidden(c) {
        out.push_str(&format!("U+{:04X}", c as u32));
    } else {
        out.push(c);
    }
}

/// Whether a character shows nothing, or nothing of its own, where it stands.
fn hidden(c: char) -> bool {
    let invisible = matches!(
        c as u32,
        0x00AD | 0x034F | 0x061C | 0x115F | 0x1160 | 0x17B4 | 0x17B5 | 0x180B..=0x180F | 0x200B..=0x200F
            | 0x202A..=0x202E | 0x2060..=0x206F | 0x3164 | 0xFE00..=0xFE0F | 0xFEFF | 0xFFA0 | 0xFFF0..=0xFFFB
            | 0x1D173..=0x1D17A | 0xE0000..=0xE0FFF
    );
    // The main blocks of combining marks (they attach to the character before them).
    let combining = matches!(
        c as u32,
        0x0300..=0x036F | 0x0483..=0x0489 | 0x0591..=0x05BD | 0x0610..=0x061A | 0x064B..=0x065F | 0x0670
            | 0x06D6..=0x06DC | 0x06DF..=0x06E4 | 0x0E31 | 0x0E34..=0x0E3A | 0x0E47..=0x0E4E | 0x1AB0..=0x1AFF
            | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0x302A..=0x302F | 0x3099 | 0x309A | 0xFE20..=0xFE2F
    );
    c.is_control() || invisible || combining || (c.is_whitespace() && c != ' ')
}

/// A token's bytes as text to show on a chip, for every tokenizer: valid UTF-8 as it is, and
/// bytes that are not (half a character of a byte-level token) as `\xNN` escapes, ASCII kept,
/// rather than dropped.
pub fn token_chip_text(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_string(),
        Err(_) => {
            bytes.iter().map(|&b| if b.is_ascii() { (b as char).to_string() } else { format!("\\x{b:02X}") }).collect()
        }
    }
}
