"""Files the app ships: SVG icons and the sample brain builder."""
