// Placeholder so the library has a source until train/ lands.
