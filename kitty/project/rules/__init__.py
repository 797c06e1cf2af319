"""Pure rules of onboarding: the texts kitty writes for agents."""
