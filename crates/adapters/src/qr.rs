//! QR codes as PNG images.

use std::io::Cursor;

use image::{ImageFormat, Luma};
use qrcode::QrCode;
use reviewloop_ports::{QrError, QrRenderer};

/// Renders QR codes with the `qrcode` crate and encodes them with `image`.
#[derive(Debug, Clone, Copy, Default)]
pub struct PngQrRenderer;

impl QrRenderer for PngQrRenderer {
    fn png(&self, text: &str) -> Result<Vec<u8>, QrError> {
        let code = QrCode::new(text.as_bytes()).map_err(|e| QrError(e.to_string()))?;
        let picture = code.render::<Luma<u8>>().min_dimensions(256, 256).build();
        let mut png = Vec::new();
        picture
            .write_to(&mut Cursor::new(&mut png), ImageFormat::Png)
            .map_err(|e| QrError(e.to_string()))?;
        Ok(png)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_a_decodable_png() {
        let png = PngQrRenderer
            .png("https://example.com/join/ABCDEF")
            .unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        let img = image::load_from_memory_with_format(&png, ImageFormat::Png).unwrap();
        assert!(img.width() >= 256 && img.width() == img.height());
    }
}
