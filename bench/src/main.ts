console.log("bench: coming soon");
