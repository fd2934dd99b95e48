print("under construction")
