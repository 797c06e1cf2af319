"""A project around kitty: init, doctor, onboarding, the demo."""
