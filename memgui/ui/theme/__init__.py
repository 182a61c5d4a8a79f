"""How the app looks: the palettes, the icons and the colours it uses."""
