// Placeholder translation unit until the store lands.
