//! The web board: one HTML page, its script and its style sheet, compiled
//! into the binary (no build step, no external scripts or fonts: the page
//! works offline). The page talks only to the JSON routes.

use axum::http::header;
use axum::response::IntoResponse;

/// `GET /`.
pub async fn index() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
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
