//! The web board: one HTML page, its script and its style sheet, compiled
//! into the binary (no build step, no external scripts or fonts: the page
//! works offline). The page talks only to the JSON routes, and its
//! content security policy holds it to them.

use axum::http::header;
use axum::response::IntoResponse;

/// What the page may load and run: its own script, style sheet and API
/// alone (no inline script, nothing from elsewhere), so that text that
/// ever got into the page as markup could not run; `data:` images for its
/// empty icon.
const CONTENT_SECURITY_POLICY: &str =
    "default-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'";

/// `GET /`.
pub async fn index() -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
        ],
        include_str!("assets/index.html"),
    )
}

/// `GET /app.js`.
pub async fn script() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        include_str!("assets/app.js"),
    )
}

/// `GET /style.css`.
pub async fn style() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/css; charset=utf-8")],
        include_str!("assets/style.css"),
    )
}
