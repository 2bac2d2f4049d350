def count(text):
    return len(text.split(" "))
